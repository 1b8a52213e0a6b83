"""Agent wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from msgspec import UNSET, UnsetType

from controlplane_domain.agents.entity import AgentStatus
from controlplane_wire.base import Name, OrganizationResource, Page, Request
from controlplane_wire.configuration import ExecutionEnvironment
from controlplane_wire.runtimes import RuntimeId


class AgentCreate(Request, kw_only=True):
    name: Name
    description: str | None = None
    status: AgentStatus = AgentStatus.ACTIVE
    runtime: RuntimeId = "default"
    model_id: str | None = None
    system_prompt: str | None = None
    team_id: str | None = None
    capabilities: list[str] = []
    skill_ids: list[str] = []
    execution_environment: ExecutionEnvironment | None = None
    configuration: dict[str, Any] = {}


class AgentUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    status: AgentStatus | UnsetType = UNSET
    runtime: RuntimeId | UnsetType = UNSET
    model_id: str | UnsetType | None = UNSET
    system_prompt: str | UnsetType | None = UNSET
    team_id: str | UnsetType | None = UNSET
    capabilities: list[str] | UnsetType = UNSET
    skill_ids: list[str] | UnsetType = UNSET
    execution_environment: ExecutionEnvironment | UnsetType | None = UNSET
    configuration: dict[str, Any] | UnsetType = UNSET


class Agent(OrganizationResource, kw_only=True):
    name: str
    description: str | None
    status: AgentStatus
    runtime: str
    model_id: str | None
    system_prompt: str | None
    team_id: str | None
    capabilities: list[str]
    skill_ids: list[str]
    execution_environment: ExecutionEnvironment | None
    configuration: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class AgentList(Page[Agent]):
    items: list[Agent]
