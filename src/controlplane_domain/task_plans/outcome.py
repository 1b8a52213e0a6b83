"""A planning execution ends (the worker completes or fails it, the reaper fails it, a client cancels it) and, in
the same unit of work, its plan is decided: `ready` with the worker's plan once every rule holds, `failed` saying
why, or `cancelled`. The plan's row is locked first (`get(..., for_update=True)`), as a workflow run's is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from controlplane_domain.executions.entity import Execution, ExecutionEvent, ExecutionStatus
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.task_plans.checks import PlanRejected, checked_plan
from controlplane_domain.task_plans.entity import PlanStatus, TaskPlan, plan_topic

S = ExecutionStatus


async def record_planning_end(
    ports: Ports, uow: UnitOfWork, before: Execution, after: Execution, rows: Sequence[ExecutionEvent]
) -> tuple[bool, set[str]]:
    """`executions.record` of a planning execution that ends, and its plan's outcome, in one unit of work:
    (recorded, the topics to publish once committed)."""
    plan = await uow.task_plans.by_execution(after.organization_id, after.id, for_update=True)
    if not await uow.executions.record(before, after, rows):
        return False, set()
    if plan is None or not plan.is_planning:  # (cancelled meanwhile: its plan ended first)
        return True, set()
    await uow.task_plans.update(await decided(ports, uow, plan, after))
    return True, {plan_topic(plan.id)}


async def decided(ports: Ports, uow: UnitOfWork, plan: TaskPlan, execution: Execution) -> TaskPlan:
    """The plan once its planning execution ended as `execution` did."""
    now = execution.updated_at
    ended = replace(plan, updated_at=now, finished_at=now)
    if execution.status is S.CANCELLED:
        return replace(ended, status=PlanStatus.CANCELLED, error=f"its planning execution was cancelled"
                       f"{': ' + execution.error if execution.error else ''}")  # fmt: skip
    if execution.status is not S.COMPLETED:
        why = execution.error or "no reason given"
        return replace(ended, status=PlanStatus.FAILED, error=f"its planning execution {execution.status}: {why}")
    try:
        summary, steps = await checked_plan(ports, uow, plan, execution.response)
    except PlanRejected as exc:
        return replace(ended, status=PlanStatus.FAILED, error=f"the worker's plan was rejected: {exc}")
    return replace(ended, status=PlanStatus.READY, summary=summary, steps=steps, error=None)
