"""Team wire types: every team response is the spec's TeamWithAgentsResponse."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from controlplane_domain.teams.entity import TeamStatus
from controlplane_wire.agents import Agent, Name
from controlplane_wire.base import Request
from controlplane_wire.configuration import ExecutionEnvironment, TeamConfiguration, TeamConfigurationUpdate
from controlplane_wire.runtimes import RuntimeId


class TeamCreate(Request, kw_only=True):
    name: Name
    description: str | None = None
    status: TeamStatus = TeamStatus.ACTIVE
    runtime: RuntimeId = "default"
    configuration: TeamConfiguration = msgspec.field(default_factory=TeamConfiguration)
    skill_ids: list[str] | None = None
    execution_environment: ExecutionEnvironment | None = None


class TeamUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    status: TeamStatus | UnsetType = UNSET
    runtime: RuntimeId | UnsetType = UNSET
    configuration: TeamConfigurationUpdate | UnsetType = UNSET
    skill_ids: list[str] | UnsetType | None = UNSET
    execution_environment: ExecutionEnvironment | UnsetType | None = UNSET


class TeamWithAgentsResponse(msgspec.Struct, kw_only=True):
    id: str
    organization_id: str
    name: str
    description: str | None
    status: TeamStatus
    runtime: str = "default"
    configuration: TeamConfiguration
    created_at: datetime
    updated_at: datetime
    projects: list[dict[str, Any]] = []
    skill_ids: list[str] | None = None
    skills: list[dict[str, Any]] | None = None
    execution_environment: ExecutionEnvironment | None = None
    agents: list[Agent]


class TeamList(msgspec.Struct, kw_only=True):
    items: list[TeamWithAgentsResponse]
    total: int
    limit: int
    offset: int
