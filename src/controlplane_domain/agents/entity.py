"""The Agent aggregate."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.config import ExecutionEnvironment, JSONObject


class AgentStatus(StrEnum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    ARCHIVED = "archived"
    IDLE = "idle"


@dataclass(frozen=True, slots=True, kw_only=True)
class Agent:
    """An AI agent of one organization; `team_id` is the single truth of its team membership."""

    audited: ClassVar[Audited] = Audited("agent")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    description: str | None
    status: AgentStatus
    runtime: str
    model_id: str | None
    system_prompt: str | None
    team_id: str | None
    capabilities: list[str] = field(default_factory=list)
    skill_ids: list[str] = field(default_factory=list)
    execution_environment: ExecutionEnvironment | None = None
    configuration: JSONObject = field(default_factory=dict)
    created_at: datetime
    updated_at: datetime
