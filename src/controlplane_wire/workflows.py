"""Workflow and workflow run wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.workflows.entity import (
    MAX_STEP_ATTEMPTS,
    MAX_STEPS,
    TIMEOUT_MAX_SECONDS,
    RunEventType,
    RunStatus,
    StepStatus,
)
from controlplane_wire.base import UUID_SCHEMA, Name, OrganizationResource, Page, Request

StepId = Annotated[str, Meta(pattern="^[A-Za-z0-9_-]{1,64}$", description="unique in the workflow")]
Prompt = Annotated[
    str,
    Meta(min_length=1, max_length=200_000, description="may use {{input.x}} and {{steps.<id>.output}}"),
]


class StepIn(Request, kw_only=True):
    id: StepId
    agent_id: str | None = None
    team_id: str | None = None
    prompt: Prompt
    depends_on: Annotated[list[StepId], Meta(max_length=MAX_STEPS)] = []
    worker_queue_id: str | None = None
    max_attempts: Annotated[int, Meta(ge=1, le=MAX_STEP_ATTEMPTS)] = 1
    timeout_seconds: Annotated[int, Meta(ge=1, le=TIMEOUT_MAX_SECONDS)] | None = None


Steps = Annotated[list[StepIn], Meta(min_length=1, max_length=MAX_STEPS)]


class WorkflowCreate(Request, kw_only=True):
    name: Name
    description: str | None = None
    steps: Steps


class WorkflowUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    steps: Steps | UnsetType = UNSET


class Step(msgspec.Struct, kw_only=True):
    id: str
    agent_id: str | None
    team_id: str | None
    prompt: str
    depends_on: list[str]
    worker_queue_id: str | None
    max_attempts: int
    timeout_seconds: int | None


class Workflow(OrganizationResource, kw_only=True):
    name: str
    description: str | None
    steps: list[Step]
    created_at: datetime
    updated_at: datetime


class WorkflowList(Page[Workflow]):
    items: list[Workflow]


class RunCreate(Request, kw_only=True):
    worker_queue_id: Annotated[str, Meta(extra_json_schema=UUID_SCHEMA)]
    input: dict[str, Any] = {}


class StepRun(msgspec.Struct, kw_only=True):
    id: str
    status: StepStatus
    execution_id: str | None
    attempt: int
    max_attempts: int
    depends_on: list[str]
    output: str | None
    error: str | None
    started_at: datetime | None
    finished_at: datetime | None


class WorkflowRun(OrganizationResource, kw_only=True):
    workflow_id: str
    status: RunStatus
    input: dict[str, Any]
    worker_queue_id: str
    steps: list[StepRun]
    error: str | None
    last_event_seq: int
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class WorkflowRunList(Page[WorkflowRun]):
    items: list[WorkflowRun]


class RunServerSentEvent(msgspec.Struct, kw_only=True):
    """An event of a workflow run's stream (`id:`, `event:` and `data:` lines)."""

    event: Annotated[RunEventType, Meta(description="`run` (the run's status) or `step` (a step's)")]
    id: Annotated[str, Meta(pattern="^[1-9][0-9]*$", description="its sequence number: `Last-Event-ID` resumes")]
    data: Annotated[str, Meta(description="JSON: {run_id, seq, type, data, created_at}")]
