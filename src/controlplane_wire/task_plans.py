"""Task plan wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

from controlplane_domain.task_plans.entity import MAX_AGENT_IDS, TASK_MAX_LENGTH, PlanStatus
from controlplane_wire.base import UUID_SCHEMA, OrganizationResource, Page, Request


class TaskPlanCreate(Request, kw_only=True):
    task: Annotated[str, Meta(min_length=1, max_length=TASK_MAX_LENGTH, description="the task, in plain words")]
    worker_queue_id: Annotated[
        str, Meta(description="where the planning runs, and later the plan's run", extra_json_schema=UUID_SCHEMA)
    ]
    agent_ids: (
        Annotated[
            list[str],
            Meta(
                min_length=1,
                max_length=MAX_AGENT_IDS,
                extra_json_schema={"uniqueItems": True},
                description="the only agents the plan's steps may use (then no team); all of the organization's "
                "agents and teams when left out",
            ),
        ]
        | None
    ) = None


class PlanStep(msgspec.Struct, kw_only=True):
    id: str
    title: str
    agent_id: str | None
    team_id: str | None
    prompt: str
    depends_on: list[str]


class TaskPlan(OrganizationResource, kw_only=True):
    task: str
    worker_queue_id: str
    agent_ids: list[str] | None
    status: Annotated[
        PlanStatus,
        Meta(description="planning, then ready or failed (`error` says why) or cancelled; started once it ran"),
    ]
    summary: str | None
    steps: list[PlanStep]
    error: str | None
    execution_id: Annotated[str, Meta(description="the planning execution")]
    workflow_id: Annotated[str | None, Meta(description="once it ran: the workflow made of its steps")]
    workflow_run_id: Annotated[str | None, Meta(description="once it ran: that workflow's run")]
    created_at: datetime
    updated_at: datetime
    finished_at: Annotated[datetime | None, Meta(description="when its planning ended")]


class TaskPlanList(Page[TaskPlan]):
    items: list[TaskPlan]
