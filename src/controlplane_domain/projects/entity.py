"""Projects: where an organization's agents and teams belong (an agent or team may be in several)."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.config import JSONObject

PROJECT_KEY = re.compile(r"[A-Z][A-Z0-9]{1,9}")


class ProjectStatus(enum.StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"


class MemberKind(enum.StrEnum):
    """What a project holds: agents and teams."""

    AGENT = "agent"
    TEAM = "team"


@dataclass(frozen=True, slots=True, kw_only=True)
class Project:
    """A named group of agents and teams with a short unique key (e.g. `OPS`)."""

    audited: ClassVar[Audited] = Audited("project")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    key: str
    description: str | None
    status: ProjectStatus
    settings: JSONObject
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class ProjectCounts:
    """How many agents and teams a project holds."""

    agents: int = 0
    teams: int = 0


@dataclass(frozen=True, slots=True)
class ProjectView:
    """A project as answered: the project and its counts."""

    project: Project
    counts: ProjectCounts
