"""The Team aggregate and its read model with members."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from controlplane_domain.agents.entity import Agent
from controlplane_domain.config import ExecutionEnvironment, TeamSettings


class TeamStatus(StrEnum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    ARCHIVED = "archived"
    IDLE = "idle"


@dataclass(frozen=True, slots=True, kw_only=True)
class Team:
    """A team of agents; its members are the agents whose `team_id` names it."""

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
    """A team with its member agents in stable order (created_at, id)."""

    team: Team
    members: list[Agent]

    @property
    def member_ids(self) -> list[str]:
        return [agent.id for agent in self.members]
