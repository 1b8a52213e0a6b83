"""Jobs in SQL: the jobs and job_runs tables, the row mapping and the repository (the scheduler's claim too)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from controlplane_adapters.executions.table import executions
from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import UtcDateTime, owned_table
from controlplane_adapters.sql.fair import in_turns
from controlplane_adapters.sql.listing import ordered
from controlplane_adapters.sql.pages import read_page_where
from controlplane_adapters.sql.rows import Custom, RowMapping, sealed
from controlplane_adapters.workflows.sql import workflow_runs
from controlplane_domain.errors import Conflict
from controlplane_domain.jobs.entity import (
    FiringFilter,
    Job,
    JobRun,
    Target,
    TargetKind,
    Trigger,
    TriggerType,
)
from controlplane_domain.paging import PageRequest

jobs = owned_table(
    "jobs",
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    sa.Column("trigger_type", sa.String(16), nullable=False),
    sa.Column("cron", sa.String(255), nullable=True),
    sa.Column("timezone", sa.String(64), nullable=True),
    sa.Column("target_kind", sa.String(16), nullable=False),
    sa.Column("target_id", sa.String(64), nullable=False),
    sa.Column("prompt", sa.Text(), nullable=False),
    sa.Column("worker_queue_id", sa.String(64), nullable=True),
    sa.Column("overlap", sa.String(16), nullable=False),
    sa.Column("misfire", sa.String(16), nullable=False),
    sa.Column("next_run_at", UtcDateTime(), nullable=True),
    sa.Column("secret_key_id", sa.String(64), nullable=True),
    sa.Column("secret_sealed", sa.LargeBinary(), nullable=True),
    sa.Index("ix_jobs_next_run_at", "next_run_at"),
    unique=("name",),
)

job_runs = owned_table(
    "job_runs",
    sa.Column("job_id", sa.String(64), sa.ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False),
    sa.Column("trigger", sa.String(16), nullable=False),
    sa.Column("fired_at", UtcDateTime(), nullable=False),
    sa.Column("scheduled_for", UtcDateTime(), nullable=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("execution_id", sa.String(64), nullable=True),
    sa.Column("workflow_run_id", sa.String(64), nullable=True),
    sa.Column("skipped_reason", sa.Text(), nullable=True),
    sa.Column("webhook_id", sa.String(255), nullable=True),
    sa.Column("created_at", UtcDateTime(), nullable=False),
    sa.UniqueConstraint("job_id", "webhook_id"),
    sa.Index("ix_job_runs_job_fired", "job_id", "fired_at", "id"),
    stamped=False,
    paged=False,
)


def _time(value: datetime | None) -> Any:
    return sa.literal(value, UtcDateTime())


JOB_ROWS = RowMapping(
    Job,
    jobs,
    trigger=Custom(
        ("trigger_type", "cron", "timezone"),
        lambda trigger: {"trigger_type": trigger.type.value, "cron": trigger.cron, "timezone": trigger.timezone},
        lambda row: Trigger(TriggerType(row.trigger_type), row.cron, row.timezone),
    ),
    target=Custom(
        ("target_kind", "target_id"),
        lambda target: {"target_kind": target.kind.value, "target_id": target.id},
        lambda row: Target(TargetKind(row.target_kind), row.target_id),
    ),
    secret=sealed("secret_key_id", "secret_sealed"),
)
RUN_ROWS = RowMapping(JobRun, job_runs)


class SqlJobRepository(SqlRepository[Job]):
    rows = JOB_ROWS
    noun = "job"
    audited = Job.audited

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Job]:
        return await self._sealed_elsewhere(self.table.c.secret_key_id, key_id, limit)

    async def get_for_webhook(self, job_id: str) -> Job | None:
        row = (await self.connection.execute(sa.select(jobs).where(jobs.c.id == job_id))).first()
        return None if row is None else JOB_ROWS.to_domain(row)

    async def due(self, now: datetime, limit: int, *, per_organization: int) -> list[Job]:
        due = sa.and_(jobs.c.enabled.is_(True), jobs.c.next_run_at.is_not(None), jobs.c.next_run_at <= now)
        statement = in_turns(jobs, due, jobs.c.next_run_at, limit=limit, per_organization=per_organization)
        return [JOB_ROWS.to_domain(row) for row in await self.connection.execute(statement)]

    async def claim(self, claims: Sequence[tuple[Job, datetime | None]]) -> list[Job]:
        # One UPDATE ... RETURNING for the batch: each row found by its key (IS NOT DISTINCT FROM is served by no
        # index: with `=`, Postgres took ix_jobs_next_run_at, and with 1,000 jobs due at one instant each claim
        # read all 1,000), its value compared with the one read. On Postgres a second node's UPDATE waits for the
        # first one's row locks, then re-evaluates its WHERE on the committed rows: their `next_run_at` has moved,
        # those rows are not updated. SQLite has one writer at a time.
        if not claims:
            return []
        ids = [job.id for job, _ in claims]
        read = sa.case({job.id: _time(job.next_run_at) for job, _ in claims}, value=jobs.c.id)
        following = sa.case({job.id: _time(next_run_at) for job, next_run_at in claims}, value=jobs.c.id)
        statement = (
            jobs.update()
            .where(jobs.c.id.in_(ids), jobs.c.enabled.is_(True), jobs.c.next_run_at.is_not_distinct_from(read))
            .values(next_run_at=following)
            .returning(*jobs.c)
        )
        return [JOB_ROWS.to_domain(row) for row in await self.connection.execute(statement)]

    async def add_run(self, *runs: JobRun) -> None:
        if not runs:
            return
        rows = [RUN_ROWS.to_row(run) for run in runs]
        try:
            await self.connection.execute(job_runs.insert(), rows if len(rows) > 1 else rows[0])
        except IntegrityError as exc:
            if "foreign key" in str(exc.orig).lower():
                raise Conflict("the job was deleted meanwhile") from exc
            raise Conflict("the job already has a run for this webhook-id", {"field": "webhook-id"}) from exc

    async def run_page(self, organization_id: str, job_id: str, page: PageRequest) -> tuple[list[JobRun], int]:
        where = (job_runs.c.organization_id == organization_id, job_runs.c.job_id == job_id)
        order = ordered(page, job_runs.c.fired_at, job_runs.c.id)
        rows, total = await read_page_where(self.connection, organization_id, page, job_runs, where, order)
        return [RUN_ROWS.to_domain(row) for row in rows], total

    async def run_for_webhook(self, organization_id: str, job_id: str, webhook_id: str) -> JobRun | None:
        statement = sa.select(job_runs).where(
            job_runs.c.organization_id == organization_id,
            job_runs.c.job_id == job_id,
            job_runs.c.webhook_id == webhook_id,
        )
        row = (await self.connection.execute(statement)).first()
        return None if row is None else RUN_ROWS.to_domain(row)

    async def last_fired_run(self, organization_id: str, job_id: str) -> JobRun | None:
        statement = (
            sa.select(job_runs)
            .where(
                job_runs.c.organization_id == organization_id,
                job_runs.c.job_id == job_id,
                sa.or_(job_runs.c.execution_id.is_not(None), job_runs.c.workflow_run_id.is_not(None)),
            )
            .order_by(job_runs.c.fired_at.desc(), job_runs.c.id.desc())
            .limit(1)
        )
        row = (await self.connection.execute(statement)).first()
        return None if row is None else RUN_ROWS.to_domain(row)

    async def get_run(self, organization_id: str, run_id: str) -> JobRun | None:
        statement = sa.select(job_runs).where(job_runs.c.organization_id == organization_id, job_runs.c.id == run_id)
        row = (await self.connection.execute(statement)).first()
        return None if row is None else RUN_ROWS.to_domain(row)

    async def firings_page(
        self, organization_id: str, page: PageRequest, where: FiringFilter | None
    ) -> tuple[list[JobRun], int]:
        conditions: list[Any] = [job_runs.c.organization_id == organization_id]
        source: Any = job_runs
        if where is not None:
            source = job_runs.outerjoin(executions, executions.c.id == job_runs.c.execution_id).outerjoin(
                workflow_runs, workflow_runs.c.id == job_runs.c.workflow_run_id
            )
            conditions.append(
                sa.or_(
                    job_runs.c.status.in_(sorted(where.firing)),
                    executions.c.status.in_(sorted(where.executions)),
                    workflow_runs.c.status.in_(sorted(where.workflow_runs)),
                )
            )
        order = (job_runs.c.fired_at.desc(), job_runs.c.id.desc())
        rows, total = await read_page_where(
            self.connection, organization_id, page, job_runs, conditions, order, source=source
        )
        return [RUN_ROWS.to_domain(row) for row in rows], total
