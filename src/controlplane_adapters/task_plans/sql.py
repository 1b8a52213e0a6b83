"""Task plans in SQL: one row a plan, its steps a JSON column (written once, when its planning ends)."""

from __future__ import annotations

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, UtcDateTime, owned_table, timestamps
from controlplane_adapters.sql.rows import RowMapping
from controlplane_domain.paging import PageRequest
from controlplane_domain.task_plans.entity import PlanStatus, TaskPlan

task_plans = owned_table(
    "task_plans",
    sa.Column("task", sa.Text(), nullable=False),
    sa.Column("worker_queue_id", sa.String(64), nullable=False),
    sa.Column("agent_ids", Json, nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("execution_id", sa.String(64), nullable=False),
    sa.Column("summary", sa.Text(), nullable=True),
    sa.Column("steps", Json, nullable=False),
    sa.Column("error", sa.Text(), nullable=True),
    sa.Column("workflow_id", sa.String(64), nullable=True),
    sa.Column("workflow_run_id", sa.String(64), nullable=True),
    *timestamps(),
    sa.Column("finished_at", UtcDateTime(), nullable=True),
    sa.Index("ix_task_plans_org_status", "organization_id", "status", "created_at", "id"),
    sa.Index("ix_task_plans_org_execution", "organization_id", "execution_id"),
    stamped=False,
)


PLAN_ROWS = RowMapping(TaskPlan, task_plans)


class SqlTaskPlanRepository(SqlRepository[TaskPlan]):
    rows = PLAN_ROWS
    noun = "task plan"
    unique_field = "id"

    async def by_execution(
        self, organization_id: str, execution_id: str, *, for_update: bool = False
    ) -> TaskPlan | None:
        t = task_plans
        query = sa.select(t).where(t.c.organization_id == organization_id, t.c.execution_id == execution_id)
        if for_update and self.connection.dialect.name == "postgresql":
            query = query.with_for_update()
        row = (await self.connection.execute(query)).first()
        return None if row is None else self._saw(row)

    async def list_page(  # type: ignore[override]
        self, organization_id: str, page: PageRequest, *, status: PlanStatus | None
    ) -> tuple[list[TaskPlan], int]:
        return await self.list_where(organization_id, page, status=status.value if status else None)
