"""Team wire types: every team response is the spec's TeamWithAgentsResponse."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.teams.entity import TeamStatus
from controlplane_wire.agents import Agent
from controlplane_wire.base import Name, OrganizationResource, Page, Request
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


class TeamWithAgentsResponse(OrganizationResource, kw_only=True):
    name: str
    description: str | None
    status: TeamStatus
    runtime: str = "default"
    configuration: TeamConfiguration
    created_at: datetime
    updated_at: datetime
    projects: Annotated[
        list[dict[str, Any]],
        Meta(description="the projects the team belongs to, in their order: `{id, name, key}` each"),
    ] = []
    skill_ids: list[str] | None = None
    skills: Annotated[
        list[dict[str, Any]] | None,
        Meta(
            description="the skills of `skill_ids`, in that order, with their details: a skill's fields and the "
            "team's `configuration_override` of it (null when `skill_ids` is)"
        ),
    ] = None
    execution_environment: ExecutionEnvironment | None = None
    agents: list[Agent]


class TeamList(Page[TeamWithAgentsResponse]):
    items: list[TeamWithAgentsResponse]
