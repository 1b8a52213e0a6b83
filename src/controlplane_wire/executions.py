"""Executions and the worker protocol on the wire."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from controlplane_domain.executions.entity import (
    MAX_ATTEMPT,
    PROMPT_MAX_LENGTH,
    SERVER_EVENTS,
    EventType,
    ExecutionStatus,
    TargetType,
)
from controlplane_wire.agents import Agent
from controlplane_wire.base import NOT_BLANK, UUID_SCHEMA, OrganizationResource, Page, Request
from controlplane_wire.configuration import MCPServerConfig
from controlplane_wire.contexts import ExecutionContext
from controlplane_wire.skills import ResolvedSkill
from controlplane_wire.teams import TeamWithAgentsResponse

WorkerId = Annotated[str, Meta(min_length=1, max_length=255)]
Attempt = Annotated[int, Meta(ge=1, le=MAX_ATTEMPT)]


class ExecuteRequest(Request, kw_only=True):
    """The spec's execution payload."""

    # (documented only: the use case's checks say what is wrong)
    prompt: Annotated[str, Meta(extra_json_schema={"pattern": NOT_BLANK, "maxLength": PROMPT_MAX_LENGTH})]
    worker_queue_id: Annotated[str, Meta(extra_json_schema=UUID_SCHEMA)]
    stream: bool = False


class Execution(OrganizationResource, kw_only=True):
    target_type: TargetType
    agent_id: str | None
    team_id: str | None
    worker_queue_id: str
    prompt: str
    status: ExecutionStatus
    response: str | None
    error: str | None
    usage: dict[str, Any]
    attempt: int
    max_attempts: int
    worker_id: str | None
    lease_expires_at: datetime | None
    cancel_requested: bool
    last_event_seq: int
    created_at: datetime
    updated_at: datetime
    queued_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    # what it was run with, kept from its creation whatever happens to its agent, team or model later (null:
    # none, or unknown for an execution older than this record whose agent or team was already deleted)
    target_name: str | None = None
    model: str | None = None
    input_cost_per_million: float | None = None
    output_cost_per_million: float | None = None
    agent_team_id: str | None = None


class ExecutionList(Page[Execution]):
    items: list[Execution]


class ExecutionEvent(msgspec.Struct, kw_only=True):
    execution_id: str
    seq: int
    type: EventType
    data: dict[str, Any]
    attempt: int
    created_at: datetime


# One event of an execution's SSE stream as a client's parser reads it: OpenAPI 3.1 describes each event of a
# `text/event-stream` response by the response's schema (keep-alive comments and the `retry` hint carry no `data`,
# so they are not events). `data` is the event as JSON, of the shape `ExecutionEvent` documents.
EVENT_DATA_SCHEMA = {
    "contentMediaType": "application/json",
    "contentSchema": {"$ref": "#/components/schemas/ExecutionEvent"},
}


class ServerSentEvent(msgspec.Struct, kw_only=True):
    """An event of an execution's stream (`id:`, `event:` and `data:` lines)."""

    event: Annotated[EventType, Meta(description="the event's type, as `data.type`")]
    id: Annotated[
        str,
        Meta(pattern="^[1-9][0-9]*$", description="its sequence number: send it as `Last-Event-ID` to resume after it"),
    ]
    data: Annotated[str, Meta(description="the event as JSON", extra_json_schema={"extra": EVENT_DATA_SCHEMA})]


class ExecutionEventList(Page[ExecutionEvent]):
    items: list[ExecutionEvent]


class LeaseRequest(Request, kw_only=True):
    worker_id: WorkerId
    wait_seconds: Annotated[float, Meta(ge=0, le=60, extra_json_schema={"extra": {"minimum": 0}})] = 20


class ResolvedFile(msgspec.Struct, kw_only=True):
    """A file an integration gives the worker, to write before it runs the agent."""

    path: str
    content: str
    mode: str


class ResolvedRun(msgspec.Struct, kw_only=True):
    """What one run (an agent, a team's own, or a team member) needs, resolved for the lease's worker:
    `env_vars` and MCP servers' `env`/`headers` with every `{{secret:NAME}}` filled in, `secrets` the values of
    the secrets its execution environment lists (for this lease's worker only: never stored, never shown again)."""

    skills: list[ResolvedSkill]
    working_dir: str | None
    env_vars: dict[str, str]
    secrets: dict[str, str]
    files: list[ResolvedFile]
    mcp_servers: dict[str, MCPServerConfig]


class ResolvedMember(ResolvedRun, kw_only=True):
    """A team member's run: the team's execution environment under the member's own; skills of the queue's
    environment, the team and the member."""

    agent_id: str


class PlanningCandidate(msgspec.Struct, kw_only=True):
    """An agent or a team a plan's step may use."""

    id: str
    name: str
    description: str | None
    capabilities: list[str]


class PlanningTask(msgspec.Struct, kw_only=True):
    """A planning execution's task (its `target_type` is `plan`): complete the execution with the plan, a JSON
    object of `plan_schema` (as the execution's `response`), following `instructions`; its steps may use only
    `agents` and `teams` (by id). The service checks the plan when the execution completes."""

    plan_id: str
    task: str
    agents: list[PlanningCandidate]
    teams: list[PlanningCandidate]
    instructions: str
    plan_schema: dict[str, Any]


class Resolved(ResolvedRun, kw_only=True):
    """Everything the worker needs to run the execution: the agent's run (a team execution: the team's own),
    the context stored with the execution, and for a team execution each member's run in the team's order; for a
    task plan's planning execution, `planning` (null for every other)."""

    context: ExecutionContext
    members: list[ResolvedMember]
    planning: PlanningTask | None = None


class Lease(msgspec.Struct, kw_only=True):
    """A leased execution: report with `worker_id` and `attempt`; heartbeats keep the lease alive."""

    execution: Execution
    attempt: int
    lease_expires_at: datetime | None
    agent: Agent | None
    team: TeamWithAgentsResponse | None
    resolved: Resolved


WORKER_EVENTS = [kind.value for kind in EventType if kind not in SERVER_EVENTS]


class NewEvent(Request, kw_only=True):
    # (documented as the types a worker may write; the service's own are refused by the use case, which says so)
    type: Annotated[EventType, Meta(extra_json_schema={"enum": WORKER_EVENTS})]
    data: dict[str, Any] = {}


class EventsAppend(Request, kw_only=True):
    worker_id: WorkerId
    attempt: Attempt
    events: Annotated[list[NewEvent], Meta(min_length=1, max_length=500)]


class EventsAppended(msgspec.Struct, kw_only=True):
    last_seq: int
    cancel_requested: bool


class CompleteRequest(Request, kw_only=True):
    worker_id: WorkerId
    attempt: Attempt
    status: Literal["completed", "failed", "cancelled"]
    response: str | None = None
    error: str | None = None
    usage: dict[str, Any] = {}
