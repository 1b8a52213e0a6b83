"""Job wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.jobs.entity import Misfire, Overlap, RunStatus, TriggerType
from controlplane_wire.base import UUID_SCHEMA, Name, OrganizationResource, Page, Request

Cron = Annotated[str, Meta(min_length=1, max_length=255, description="five fields: minute hour day month weekday")]
TimeZone = Annotated[str, Meta(min_length=1, max_length=64, description="an IANA time zone (default UTC)")]
Id = Annotated[str, Meta(max_length=64)]
TargetId = Annotated[str, Meta(max_length=64, extra_json_schema=UUID_SCHEMA)]  # (documented: the use case checks)
Prompt = Annotated[str, Meta(min_length=1, description="may use {{payload.x}}: the webhook's or trigger's payload")]


class CronTrigger(Request, tag_field="type", tag="cron", kw_only=True):
    cron: Cron
    timezone: TimeZone = "UTC"


class WebhookTrigger(Request, tag_field="type", tag="webhook", kw_only=True):
    pass


class ManualTrigger(Request, tag_field="type", tag="manual", kw_only=True):
    pass


JobTrigger = CronTrigger | WebhookTrigger | ManualTrigger


class JobTarget(Request, kw_only=True, omit_defaults=True):
    """Exactly one of `agent_id`, `team_id`, `workflow_id`."""

    agent_id: TargetId | None = None
    team_id: TargetId | None = None
    workflow_id: TargetId | None = None


class JobCreate(Request, kw_only=True):
    name: Name
    trigger: JobTrigger
    target: JobTarget
    prompt: Prompt
    worker_queue_id: Id | None = None
    enabled: bool = True
    overlap: Overlap = Overlap.ALLOW
    misfire: Misfire = Misfire.FIRE_ONCE


class JobUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    trigger: JobTrigger | UnsetType = UNSET
    target: JobTarget | UnsetType = UNSET
    prompt: Prompt | UnsetType = UNSET
    worker_queue_id: Id | UnsetType | None = UNSET
    enabled: bool | UnsetType = UNSET
    overlap: Overlap | UnsetType = UNSET
    misfire: Misfire | UnsetType = UNSET


class TriggerRequest(Request, kw_only=True):
    payload: dict[str, Any] = {}


class Job(OrganizationResource, kw_only=True):
    name: str
    enabled: bool
    trigger: JobTrigger
    target: JobTarget
    prompt: str
    worker_queue_id: str | None
    overlap: Overlap
    misfire: Misfire
    next_run_at: datetime | None
    webhook_url: str | None
    webhook_secret: str | None = None
    """The signing secret, only in the answer that made it (create, rotate-secret, a PATCH to a webhook trigger)."""
    created_at: datetime
    updated_at: datetime


class JobList(Page[Job]):
    items: list[Job]


class JobRun(msgspec.Struct, kw_only=True):
    id: str
    job_id: str
    trigger: TriggerType
    fired_at: datetime
    scheduled_for: datetime | None
    status: RunStatus
    execution_id: str | None
    workflow_run_id: str | None
    skipped_reason: str | None
    webhook_id: str | None


class JobRunList(Page[JobRun]):
    items: list[JobRun]
