"""Workflows in SQL: the workflows, their runs (each step's state a JSON column of the run's row, which every
advance locks and rewrites) and the runs' event logs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, UtcDateTime, events_table, owned_table, timestamps
from controlplane_adapters.sql.fair import in_turns
from controlplane_adapters.sql.rows import RowMapping, converted
from controlplane_adapters.sql.statements import insert_row
from controlplane_adapters.workflows.mapping import (
    step_runs_from_json,
    step_runs_to_json,
    steps_from_json,
    steps_to_json,
)
from controlplane_domain.paging import PageRequest
from controlplane_domain.workflows.entity import RunEvent, RunStatus, Workflow, WorkflowRun

workflows = owned_table(
    "workflows",
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("steps", Json, nullable=False),
    unique=("name",),
)

workflow_runs = owned_table(
    "workflow_runs",
    sa.Column("workflow_id", sa.String(64), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("input", Json, nullable=False),
    sa.Column("worker_queue_id", sa.String(64), nullable=False),
    sa.Column("definition", Json, nullable=False),
    sa.Column("steps", Json, nullable=False),
    sa.Column("error", sa.Text(), nullable=True),
    sa.Column("last_seq", sa.Integer(), nullable=False),
    *timestamps(),
    sa.Column("started_at", UtcDateTime(), nullable=True),
    sa.Column("finished_at", UtcDateTime(), nullable=True),
    sa.Column("timeout_check_at", UtcDateTime(), nullable=True),  # WorkflowRun.timeout_check_at, kept for the index
    sa.Index("ix_workflow_runs_org_workflow", "organization_id", "workflow_id", "created_at", "id"),
    sa.Index("ix_workflow_runs_org_status", "organization_id", "status", "created_at", "id"),
    sa.Index("ix_workflow_runs_timeout_check_at", "timeout_check_at"),
    stamped=False,
)

workflow_run_events = events_table("workflow_run_events", "run_id")


WORKFLOW_ROWS = RowMapping(Workflow, workflows, steps=converted("steps", steps_to_json, steps_from_json))
EVENT_ROWS = RowMapping(RunEvent, workflow_run_events)
RUN_ROWS = RowMapping(
    WorkflowRun,
    workflow_runs,
    definition=converted("definition", steps_to_json, steps_from_json),
    steps=converted("steps", step_runs_to_json, step_runs_from_json),
    computed={"timeout_check_at": lambda run: run.timeout_check_at},
)


class SqlWorkflowRepository(SqlRepository[Workflow]):
    table = workflows
    rows = WORKFLOW_ROWS
    noun = "workflow"
    audited = Workflow.audited


class SqlWorkflowRunRepository(SqlRepository[WorkflowRun]):
    table = workflow_runs
    rows = RUN_ROWS
    noun = "workflow run"
    unique_field = "id"

    async def add(self, run: WorkflowRun, events: Sequence[RunEvent]) -> None:  # type: ignore[override]
        await super().add(run)
        await self._append(events)

    async def update(self, run: WorkflowRun, events: Sequence[RunEvent]) -> None:  # type: ignore[override]
        await super().update(run)
        await self._append(events)

    async def _append(self, events: Sequence[RunEvent]) -> None:
        if events:
            await self.connection.execute(insert_row(workflow_run_events), [EVENT_ROWS.to_row(e) for e in events])

    async def list_page(  # type: ignore[override]
        self, organization_id: str, page: PageRequest, *, workflow_id: str | None, status: RunStatus | None
    ) -> tuple[list[WorkflowRun], int]:
        return await self.list_where(
            organization_id, page, workflow_id=workflow_id, status=status.value if status else None
        )

    async def timeouts_due(self, now: datetime, limit: int, *, per_organization: int) -> list[WorkflowRun]:
        t = workflow_runs
        due = sa.and_(t.c.timeout_check_at.is_not(None), t.c.timeout_check_at <= now)
        statement = in_turns(t, due, t.c.timeout_check_at, limit=limit, per_organization=per_organization)
        return [RUN_ROWS.to_domain(row) for row in await self.connection.execute(statement)]

    async def claim_timeout_check(self, run: WorkflowRun) -> bool:
        # The value is left as it is (the run's update writes the next one): the UPDATE takes the row's lock. On
        # Postgres a second node's claim waits for that lock, then re-evaluates its WHERE on the committed row
        # (READ COMMITTED), whose check has moved on, and updates nothing. SQLite has one writer at a time.
        t = workflow_runs
        statement = (
            t.update()
            .where(t.c.id == run.id, t.c.timeout_check_at.is_not_distinct_from(run.timeout_check_at))  # (by its key)
            .values(timeout_check_at=t.c.timeout_check_at)
        )
        result = await self.connection.execute(statement)
        return bool(result.rowcount == 1)

    async def events_after(self, organization_id: str, run_id: str, after_seq: int, limit: int) -> list[RunEvent]:
        t = workflow_run_events
        query = (
            sa.select(t)
            .where(t.c.organization_id == organization_id, t.c.run_id == run_id, t.c.seq > after_seq)
            .order_by(t.c.seq)
            .limit(limit)
        )
        return [EVENT_ROWS.to_domain(row) for row in await self.connection.execute(query)]
