"""Integrations (a built-in kind configured for an organization, its secret fields sealed) and custom integrations
(env vars, secret names, files and setup commands an organization defines itself)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.config import JSONObject
from controlplane_domain.integrations.catalog import MASK
from controlplane_domain.secrets.entity import SealedValue

ENV_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_ENV_VAR_NAME = 128
MAX_ENV_VAR_VALUE = 32 * 1024
MAX_ENV_VARS = 200
MAX_SECRET_NAMES = 100
MAX_FILES = 100
MAX_FILES_BYTES = 1024 * 1024
"""The content of a custom integration's files, all together, in UTF-8 bytes."""
MAX_PATH = 4096
MAX_SETUP_COMMANDS = 100
MAX_SETUP_COMMAND = 16 * 1024
MAX_MODE = 0o777
"""Permission bits only: no setuid (0o4000), setgid (0o2000) or sticky (0o1000) bit on a file a worker writes."""
DEFAULT_MODE = 0o644
MODE_TEXT = re.compile(r"(?:0o)?0?[0-7]{1,3}")
"""A mode as octal digits ("644", "0644", "0o644"): at most 0o777."""
FILE_PATH = re.compile(r"(?:/(?!\.\.?(?:/|$))[^/%\x00-\x1f\x7f]+)+")
"""A normalised absolute path: segments after each '/', none empty ('//', a trailing '/'), none '.' or '..', and no
'%' (no percent-escape to decode differently later) nor control character in any."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Integration:
    """A built-in kind of integration (catalog.py) configured for an organization. `configuration` holds the
    plain fields; the secret fields set (`secret_fields`, their names) are sealed together in `sealed` (None when
    none is set) and never leave the store but for a lease."""

    audited: ClassVar[Audited] = Audited("integration")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    kind: str
    configuration: JSONObject
    secret_fields: tuple[str, ...]
    sealed: SealedValue | None
    enabled: bool
    created_at: datetime
    updated_at: datetime

    def masked_configuration(self) -> JSONObject:
        """The configuration as answered: each secret field set stands as `MASK`."""
        return {**self.configuration, **dict.fromkeys(self.secret_fields, MASK)}


def integration_associated_data(organization_id: str, integration_id: str) -> bytes:
    """What an integration's sealed fields are bound to (a copy onto another row, or a secret's, does not open)."""
    return json.dumps([organization_id, "integration", integration_id]).encode()


@dataclass(frozen=True, slots=True)
class IntegrationFile:
    """A file a custom integration puts in the worker's sandbox: an absolute path, text content, a mode."""

    path: str
    content: str
    mode: int = DEFAULT_MODE


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomIntegration:
    """An organization's own integration: env vars given as they are, secrets by name (revealed for a lease),
    files written and commands run before the agent starts."""

    audited: ClassVar[Audited] = Audited("custom_integration")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    description: str | None
    env_vars: dict[str, str] = field(default_factory=dict)
    secret_names: list[str] = field(default_factory=list)
    files: list[IntegrationFile] = field(default_factory=list)
    setup_commands: list[str] = field(default_factory=list)
    enabled: bool = True
    created_at: datetime
    updated_at: datetime
