"""Task plans: create one (its planning execution queued on the worker queue in the same transaction), read, list,
run a ready one as a workflow run of its steps, cancel one still planning."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from controlplane_domain.errors import Conflict, ValidationFailed, found
from controlplane_domain.executions.completion import stop_with_owner
from controlplane_domain.executions.entity import Execution, ExecutionStatus, TargetType
from controlplane_domain.executions.execute import announce, applicable_context, new_queued
from controlplane_domain.executions.transitions import publish, topic
from controlplane_domain.names import is_uuid
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient
from controlplane_domain.task_plans.checks import RUN_INPUT_KEY
from controlplane_domain.task_plans.entity import (
    MAX_AGENT_IDS,
    TASK_MAX_LENGTH,
    PlanStatus,
    TaskPlan,
    plan_topic,
)
from controlplane_domain.workflows import runs
from controlplane_domain.workflows.entity import Workflow, WorkflowRun
from controlplane_domain.workflows.usecases import check_targets

S = ExecutionStatus


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePlan:
    task: str
    worker_queue_id: str
    agent_ids: tuple[str, ...] | None = None


async def require_plan(uow: UnitOfWork, organization_id: str, plan_id: str, *, lock: bool = False) -> TaskPlan:
    return found(await uow.task_plans.get(organization_id, plan_id, for_update=lock), "task plan", plan_id)


def _check(command: CreatePlan) -> None:
    if not command.task.strip():
        raise ValidationFailed("task", "must not be blank")
    if len(command.task) > TASK_MAX_LENGTH:
        raise ValidationFailed("task", f"must be at most {TASK_MAX_LENGTH} characters")
    if not is_uuid(command.worker_queue_id):
        raise ValidationFailed("worker_queue_id", "must be a UUID")
    if command.agent_ids is not None:
        if not 1 <= len(command.agent_ids) <= MAX_AGENT_IDS:
            raise ValidationFailed("agent_ids", f"give 1 to {MAX_AGENT_IDS} agent ids, or leave it out")
        seen: set[str] = set()
        for index, agent_id in enumerate(command.agent_ids):
            if agent_id in seen:
                raise ValidationFailed(f"agent_ids.{index}", f"agent '{agent_id}' is listed twice")
            seen.add(agent_id)


@retry_transient
async def create_plan(ports: Ports, organization_id: str, command: CreatePlan) -> TaskPlan:
    """A plan, `planning`, and its planning execution queued on the worker queue (422 when the queue or one of
    `agent_ids` is not the organization's)."""
    _check(command)
    async with ports.uow() as uow:
        if await uow.queues.get(organization_id, command.worker_queue_id) is None:
            raise ValidationFailed("worker_queue_id", "no worker queue of this organization has this id")
        if command.agent_ids is not None:
            found = {agent.id for agent in await uow.agents.get_many(organization_id, list(command.agent_ids))}
            for index, agent_id in enumerate(command.agent_ids):
                if agent_id not in found:
                    raise ValidationFailed(f"agent_ids.{index}", "no agent of this organization has this id")
        now = ports.clock.now()
        queue_id = command.worker_queue_id
        first, queued = new_queued(ports, organization_id, TargetType.PLAN, None, queue_id, command.task, now)
        plan = TaskPlan(
            id=ports.ids.new_id(),
            organization_id=organization_id,
            task=command.task,
            worker_queue_id=command.worker_queue_id,
            agent_ids=command.agent_ids,
            status=PlanStatus.PLANNING,
            execution_id=queued.id,
            created_at=now,
            updated_at=now,
        )
        await uow.task_plans.add(plan)  # (first: the execution's write then joins this transaction)
        await uow.executions.record(None, queued, first, context=await applicable_context(ports, uow, queued))
        await uow.commit()
    await announce(ports, queued)
    return plan


async def get_plan(ports: Ports, organization_id: str, plan_id: str) -> TaskPlan:
    async with ports.read() as uow:
        return await require_plan(uow, organization_id, plan_id)


async def list_plans(
    ports: Ports, organization_id: str, page: PageRequest, status: PlanStatus | None = None
) -> Page[TaskPlan]:
    async with ports.read() as uow:
        items, total = await uow.task_plans.list_page(organization_id, page, status=status)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


def workflow_name(plan: TaskPlan) -> str:
    return f"task-plan-{plan.id}"


@retry_transient
async def run_plan(ports: Ports, organization_id: str, plan_id: str) -> WorkflowRun:
    """Run a ready plan: a workflow of its steps (named `task-plan-<id>`, described by its summary) and that
    workflow's run on the plan's queue, with the input `{"task": <the task>}`, its first steps queued; the plan is
    then `started`. 409 when the plan is not ready, or its queue, an agent or a team of its steps is gone. The run
    goes through the workflows' start (its policy hook `workflow.run` included, and its advance slot)."""
    async with ports.advancing(organization_id), ports.uow() as uow:
        plan = await require_plan(uow, organization_id, plan_id, lock=True)
        if plan.status is not PlanStatus.READY:
            raise Conflict(f"only a ready task plan runs; this one is {plan.status}", {"status": plan.status.value})
        steps = tuple(step.definition() for step in plan.steps)
        try:
            await check_targets(uow, organization_id, steps)
        except ValidationFailed as exc:
            raise Conflict(f"the task plan can no longer run: {exc.message}") from None
        if await uow.queues.get(organization_id, plan.worker_queue_id) is None:
            raise Conflict(f"the task plan can no longer run: its worker queue '{plan.worker_queue_id}' is gone")
        now = ports.clock.now()
        workflow = Workflow(
            id=ports.ids.new_id(),
            organization_id=organization_id,
            name=workflow_name(plan),
            description=plan.summary,
            steps=steps,
            created_at=now,
            updated_at=now,
        )
        await uow.workflows.add(workflow)
        command = runs.StartRun(worker_queue_id=plan.worker_queue_id, input={RUN_INPUT_KEY: plan.task})
        advance = await runs.begin_run(ports, uow, organization_id, workflow.id, command)
        started = replace(
            plan, status=PlanStatus.STARTED, workflow_id=workflow.id, workflow_run_id=advance.run.id, updated_at=now
        )
        await uow.task_plans.update(started)
        await uow.commit()
    await publish(ports, plan_topic(plan.id), *advance.topics)
    return advance.run


@retry_transient
async def cancel_plan(ports: Ports, organization_id: str, plan_id: str) -> TaskPlan:
    """Cancel a plan still planning: `cancelled` now, and its planning execution cancelled (at once when no worker
    holds it, else its worker is asked to stop; its end then changes nothing). 409 once planning ended."""
    async with ports.uow() as uow:
        plan = await require_plan(uow, organization_id, plan_id, lock=True)
        if not plan.is_planning:
            raise Conflict(f"the task plan's planning already ended ({plan.status})", {"status": plan.status.value})
        now = ports.clock.now()
        topics = {plan_topic(plan.id)}
        execution = await uow.executions.get(organization_id, plan.execution_id, for_update=True)
        if execution is not None and not execution.is_terminal and not execution.cancel_requested:
            stopped = await _stop(uow, execution, now)
            topics.add(topic(stopped))
        cancelled = replace(plan, status=PlanStatus.CANCELLED, error="cancelled", updated_at=now, finished_at=now)
        await uow.task_plans.update(cancelled)
        await uow.commit()
    await publish(ports, *topics)
    return cancelled


async def _stop(uow: UnitOfWork, execution: Execution, now: datetime) -> Execution:
    """The planning execution cancelled (queued) or asked to stop (held), in the plan's unit of work."""
    changed = "the planning execution changed while its plan was being cancelled"
    return await stop_with_owner(uow, execution, now, "cancelled with its task plan", changed)
