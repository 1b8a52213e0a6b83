"""Task plans in SQL: one row a plan, its steps a JSON column (written once, when its planning ends)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, UtcDateTime, id_column, metadata, organization_column, timestamps
from controlplane_adapters.sql.pages import read_page_where
from controlplane_domain.paging import PageRequest
from controlplane_domain.task_plans.entity import PlanStatus, PlanStep, TaskPlan

task_plans = sa.Table(
    "task_plans",
    metadata,
    id_column(),
    organization_column(),
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
    sa.Index("ix_task_plans_org_created", "organization_id", "created_at", "id"),
    sa.Index("ix_task_plans_org_status", "organization_id", "status", "created_at", "id"),
    sa.Index("ix_task_plans_org_execution", "organization_id", "execution_id"),
)


def _steps_to_json(steps: tuple[PlanStep, ...]) -> list[dict[str, Any]]:
    return [
        {
            "id": s.id,
            "title": s.title,
            "agent_id": s.agent_id,
            "team_id": s.team_id,
            "prompt": s.prompt,
            "depends_on": list(s.depends_on),
        }
        for s in steps
    ]


def _steps_from_json(value: Any) -> tuple[PlanStep, ...]:
    return tuple(
        PlanStep(
            id=s["id"],
            title=s["title"],
            agent_id=s.get("agent_id"),
            team_id=s.get("team_id"),
            prompt=s["prompt"],
            depends_on=tuple(s.get("depends_on") or ()),
        )
        for s in value
    )


def plan_to_row(plan: TaskPlan) -> dict[str, Any]:
    return {
        "id": plan.id,
        "organization_id": plan.organization_id,
        "task": plan.task,
        "worker_queue_id": plan.worker_queue_id,
        "agent_ids": None if plan.agent_ids is None else list(plan.agent_ids),
        "status": plan.status.value,
        "execution_id": plan.execution_id,
        "summary": plan.summary,
        "steps": _steps_to_json(plan.steps),
        "error": plan.error,
        "workflow_id": plan.workflow_id,
        "workflow_run_id": plan.workflow_run_id,
        "created_at": plan.created_at,
        "updated_at": plan.updated_at,
        "finished_at": plan.finished_at,
    }


def plan_to_domain(row: Any) -> TaskPlan:
    return TaskPlan(
        id=row.id,
        organization_id=row.organization_id,
        task=row.task,
        worker_queue_id=row.worker_queue_id,
        agent_ids=None if row.agent_ids is None else tuple(row.agent_ids),
        status=PlanStatus(row.status),
        execution_id=row.execution_id,
        summary=row.summary,
        steps=_steps_from_json(row.steps),
        error=row.error,
        workflow_id=row.workflow_id,
        workflow_run_id=row.workflow_run_id,
        created_at=row.created_at,
        updated_at=row.updated_at,
        finished_at=row.finished_at,
    )


class SqlTaskPlanRepository(SqlRepository[TaskPlan]):
    table = task_plans
    to_row = staticmethod(plan_to_row)
    to_domain = staticmethod(plan_to_domain)
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

    async def newest_page(
        self, organization_id: str, page: PageRequest, statuses: frozenset[PlanStatus] | None
    ) -> tuple[list[TaskPlan], int]:
        conditions: list[Any] = [task_plans.c.organization_id == organization_id]
        if statuses is not None:
            conditions.append(task_plans.c.status.in_(sorted(status.value for status in statuses)))
        order = (task_plans.c.created_at.desc(), task_plans.c.id.desc())
        rows, total = await read_page_where(self.connection, organization_id, page, task_plans, conditions, order)
        return [plan_to_domain(row) for row in rows], total
