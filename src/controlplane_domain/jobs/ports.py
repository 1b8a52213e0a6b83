"""What the jobs area needs: a store for jobs and their runs, a cron calendar and a webhook signature checker."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from controlplane_domain.jobs.entity import FiringFilter, Job, JobRun
from controlplane_domain.paging import PageRequest
from controlplane_domain.repository import Repository


class JobRepository(Repository[Job], Protocol):
    async def add(self, job: Job) -> None:
        """Store a new job; Conflict when its name is taken in the organization."""

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Job]:
        """Webhook jobs of every organization whose signing secret another key sealed, by id, at most `limit`
        (locked until the unit of work ends, for a key rotation)."""

    async def update(self, job: Job) -> None:
        """Replace a stored job; Conflict when its new name is taken."""

    async def delete(self, organization_id: str, job_id: str) -> None:
        """Delete the job and its runs (never the executions they created)."""

    async def get_for_webhook(self, job_id: str) -> Job | None:
        """The job of any organization with this id: the public webhook route knows no organization before the
        job's signature is checked (its only caller)."""

    async def due(self, now: datetime, limit: int, *, per_organization: int) -> list[Job]:
        """Scheduler only, across organizations: enabled jobs whose `next_run_at` is at or before `now`, in turns
        between organizations (`controlplane_domain.fairness.in_turns`: every organization's earliest first, at
        most `per_organization` of one), at most `limit`."""

    async def claim(self, claims: Sequence[tuple[Job, datetime | None]]) -> list[Job]:
        """For each `(job, next_run_at)`: move the job's `next_run_at` from the value `job` holds to `next_run_at`
        if it still holds it and the job is enabled (a compare-and-set; one write for them all). The jobs it
        moved, as they are now (a change made meanwhile shows), in any order; their rows stay locked until the
        transaction ends: of several nodes claiming one firing, exactly one gets it."""

    async def add_run(self, *runs: JobRun) -> None:
        """Record runs (several in one write); Conflict when a job already has a run for its `webhook_id`."""

    async def run_page(self, organization_id: str, job_id: str, page: PageRequest) -> tuple[list[JobRun], int]:
        """The job's runs, most recent first ((fired_at, id) descending), and their total."""

    async def run_for_webhook(self, organization_id: str, job_id: str, webhook_id: str) -> JobRun | None: ...

    async def last_fired_run(self, organization_id: str, job_id: str) -> JobRun | None:
        """The job's latest run that created an execution or a workflow run."""

    async def get_run(self, organization_id: str, run_id: str) -> JobRun | None: ...

    async def firings_page(
        self, organization_id: str, page: PageRequest, where: FiringFilter | None
    ) -> tuple[list[JobRun], int]:
        """The runs of all the organization's jobs (those `where` keeps, when given), most recent first
        ((fired_at, id) descending), and their total."""


class CronCalendar(Protocol):
    def problem(self, expression: str, timezone: str) -> tuple[str, str] | None:
        """None when the five-field expression and the IANA time zone are valid; otherwise (field, issue), the
        field being `cron` or `timezone`."""

    def next_after(self, expression: str, timezone: str, after: datetime) -> datetime:
        """The first firing strictly after `after` (UTC in and out), at the expression's local time in `timezone`."""


class WebhookSignatures(Protocol):
    def new_secret(self) -> str:
        """A new signing secret, `whsec_` then base64."""

    def verify(self, secret: str, body: bytes, headers: Mapping[str, str], now: datetime) -> bool:
        """Whether the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) sign
        `body` with `secret`, the timestamp within the tolerance of `now`."""
