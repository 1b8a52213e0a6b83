"""Templates: a named agent or team creation payload with `{{name}}` placeholders and the parameters they name."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.config import JSONObject

PARAMETER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
BUILTIN_OWNER = ""
"""The `organization_id` of a built-in template: it belongs to no organization and every organization lists it."""


class TemplateKind(enum.StrEnum):
    """What a template creates."""

    AGENT = "agent"
    TEAM = "team"


class TemplateScope(enum.StrEnum):
    """Which templates a list shows."""

    BUILTIN = "builtin"
    ORGANIZATION = "organization"
    ALL = "all"


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateParameter:
    """A value a template asks for when instantiated; `default` None means none (the value is then null)."""

    name: str
    description: str | None = None
    required: bool = False
    default: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Template:
    """An organization's template, or a built-in one (`organization_id` is BUILTIN_OWNER)."""

    audited: ClassVar[Audited] = Audited("template")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    kind: TemplateKind
    description: str | None
    parameters: tuple[TemplateParameter, ...]
    body: JSONObject
    created_at: datetime
    updated_at: datetime

    @property
    def builtin(self) -> bool:
        return self.organization_id == BUILTIN_OWNER
