"""The Team aggregate and its read model with members."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import ClassVar, Protocol

from controlplane_domain.agents.entity import Agent
from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.config import ExecutionEnvironment, TeamSettings
from controlplane_domain.skills.entity import AttachedSkill


class TeamStatus(StrEnum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    ARCHIVED = "archived"
    IDLE = "idle"


@dataclass(frozen=True, slots=True, kw_only=True)
class Team:
    """A team of agents; its members are the agents whose `team_id` names it."""

    audited: ClassVar[Audited] = Audited("team")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    description: str | None
    status: TeamStatus
    runtime: str
    settings: TeamSettings
    skill_ids: list[str] | None
    execution_environment: ExecutionEnvironment | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class TeamView:
    """A team with its member agents in stable order (created_at, id), the projects it belongs to (in theirs) and
    its skills with their details (in `skill_ids` order; None when `skill_ids` is). A view built without the last
    two (a lease's) leaves them empty."""

    team: Team
    members: list[Agent]
    projects: Sequence[ProjectOfMember] = ()
    skills: list[AttachedSkill] | None = None

    @property
    def member_ids(self) -> list[str]:
        return [agent.id for agent in self.members]


class ProjectOfMember(Protocol):
    """What a team's answer says of a project it belongs to (a `projects.entity.Project` is one; the projects
    area names teams, so teams name it only by this shape)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def key(self) -> str: ...
