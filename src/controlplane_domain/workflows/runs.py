"""Workflow runs: start one (its first steps queued in the same transaction), read, list, cancel, and follow its
events (the SSE stream)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field, replace
from datetime import datetime

from controlplane_domain.config import JSONObject
from controlplane_domain.errors import Conflict, ValidationFailed, found
from controlplane_domain.executions.completion import stop_with_owner
from controlplane_domain.executions.entity import Execution, ExecutionStatus
from controlplane_domain.executions.transitions import NO_BUS_POLL_SECONDS, publish, topic
from controlplane_domain.names import is_uuid
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.policies.entity import Action, Resource
from controlplane_domain.policies.gate import guard
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.principal import Principal
from controlplane_domain.retry import retry_transient
from controlplane_domain.workflows.advance import Advance, finish, run_topic, settle
from controlplane_domain.workflows.entity import (
    RunEvent,
    RunEventType,
    RunStatus,
    StepRun,
    StepStatus,
    Workflow,
    WorkflowRun,
    run_event,
)
from controlplane_domain.workflows.graph import inputs_read
from controlplane_domain.workflows.usecases import require_workflow

S = ExecutionStatus
EVENTS_PAGE = 200


@dataclass(frozen=True, slots=True, kw_only=True)
class StartRun:
    worker_queue_id: str
    input: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFilter:
    workflow_id: str | None = None
    status: RunStatus | None = None


async def may_run(
    ports: Ports, uow: UnitOfWork, workflow: Workflow, command: StartRun, principal: Principal | None
) -> None:
    """The policies' gate (`workflow.run`): PolicyDenied when an enforcing policy refuses this run. It runs before
    anything is written."""
    resource = Resource("workflow", workflow.id, {"name": workflow.name, "steps": len(workflow.steps)})
    request = {"worker_queue_id": command.worker_queue_id, "input": dict(command.input)}
    await guard(ports, Action.WORKFLOW_RUN, workflow.organization_id, principal, resource, request, uow=uow)


async def require_run(uow: UnitOfWork, organization_id: str, run_id: str, *, lock: bool = False) -> WorkflowRun:
    return found(await uow.workflow_runs.get(organization_id, run_id, for_update=lock), "workflow run", run_id)


@retry_transient
async def start_run(
    ports: Ports, organization_id: str, workflow_id: str, command: StartRun, *, principal: Principal | None = None
) -> WorkflowRun:
    """A run of the workflow's current definition, `running`, its first steps' executions queued in the same
    transaction (a step whose queue, agent or team has gone fails at once, and the run with it). In one of the
    organization's advance slots (`Ports.advancing`), as every advance a request starts."""
    async with ports.advancing(organization_id), ports.uow() as uow:
        advance = await begin_run(ports, uow, organization_id, workflow_id, command, principal=principal)
        await uow.commit()
    await publish(ports, *advance.topics)
    return advance.run


async def begin_run(
    ports: Ports,
    uow: UnitOfWork,
    organization_id: str,
    workflow_id: str,
    command: StartRun,
    *,
    principal: Principal | None = None,
) -> Advance:
    """`start_run` inside the caller's unit of work (a job's firing writes its run record in the same one): the run
    written, its first steps queued; the caller commits, then publishes the returned `topics`. NotFound (the
    workflow), ValidationFailed (the input, the queue) and PolicyDenied are raised before anything is written."""
    if not is_uuid(command.worker_queue_id):
        raise ValidationFailed("worker_queue_id", "must be a UUID")
    now = ports.clock.now()
    workflow = await require_workflow(uow, organization_id, workflow_id, lock=True)
    for _, key in inputs_read(workflow.steps):
        if key not in command.input:
            raise ValidationFailed(("input", key), "a step's prompt reads this input, which was not given")
    if await uow.queues.get(organization_id, command.worker_queue_id) is None:
        raise ValidationFailed("worker_queue_id", "no worker queue of this organization has this id")
    await may_run(ports, uow, workflow, command, principal)
    run = WorkflowRun(
        id=ports.ids.new_id(),
        organization_id=organization_id,
        workflow_id=workflow.id,
        status=RunStatus.RUNNING,
        input=dict(command.input),
        worker_queue_id=command.worker_queue_id,
        definition=workflow.steps,
        steps=tuple(StepRun(id=step.id) for step in workflow.steps),
        created_at=now,
        updated_at=now,
        started_at=now,
    )
    advance = Advance(run)
    advance.events.append(run_event(run))
    await settle(ports, uow, advance, now)
    await advance.save(ports, uow, now, new=True)
    return advance


async def get_run(ports: Ports, organization_id: str, run_id: str) -> WorkflowRun:
    async with ports.read() as uow:
        return await require_run(uow, organization_id, run_id)


async def list_runs(ports: Ports, organization_id: str, page: PageRequest, where: RunFilter) -> Page[WorkflowRun]:
    async with ports.read() as uow:
        items, total = await uow.workflow_runs.list_page(
            organization_id, page, workflow_id=where.workflow_id, status=where.status
        )
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


@retry_transient
async def cancel_run(ports: Ports, organization_id: str, run_id: str) -> WorkflowRun:
    """Cancel the run now: its pending and running steps are cancelled; a running step's execution is cancelled at
    once when no worker holds it yet, else its worker is asked to stop (as `POST /executions/{id}/cancel`). 409
    when the run already ended."""
    async with ports.advancing(organization_id), ports.uow() as uow:
        run = await require_run(uow, organization_id, run_id, lock=True)
        if run.is_terminal:
            raise Conflict(f"the workflow run already finished ({run.status})", {"status": run.status.value})
        now = ports.clock.now()
        advance = Advance(run)
        for step in run.steps:
            if step.status is StepStatus.RUNNING and step.execution_id is not None:
                stopped = await _stop_execution(uow, organization_id, step.execution_id, now)
                if stopped is not None:
                    advance.topics.add(topic(stopped))
            if not step.is_terminal:
                advance.set_step(
                    replace(step, status=StepStatus.CANCELLED, error="the run was cancelled", finished_at=now)
                )
        finish(advance, now, status=RunStatus.CANCELLED, error="cancelled")
        run = await advance.save(ports, uow, now)
        await uow.commit()
    await publish(ports, *advance.topics)
    return run


async def _stop_execution(uow: UnitOfWork, organization_id: str, execution_id: str, now: datetime) -> Execution | None:
    """Cancel a step's execution in the run's unit of work (its end does not advance the run: the run ends)."""
    execution = await uow.executions.get(organization_id, execution_id, for_update=True)
    if execution is None or execution.is_terminal or execution.cancel_requested:
        return None
    changed = "a step's execution changed while its run was being cancelled"
    return await stop_with_owner(uow, execution, now, "cancelled with its workflow run", changed)


async def events_after(ports: Ports, organization_id: str, run_id: str, after_seq: int) -> list[RunEvent]:
    async with ports.read() as uow:
        return await uow.workflow_runs.events_after(organization_id, run_id, after_seq, EVENTS_PAGE)


async def follow_run(
    ports: Ports, organization_id: str, run_id: str, after_seq: int, keepalive_seconds: float
) -> AsyncGenerator[RunEvent | None, None]:
    """Every event of the run after `after_seq`, pushed as it is written, ending after the run's terminal event;
    None when `keepalive_seconds` pass without one (time for a keep-alive comment)."""
    subscription = ports.bus.subscribe(run_topic(run_id)) if ports.bus is not None else None
    last = after_seq
    try:
        while True:
            events = await events_after(ports, organization_id, run_id, last)
            for event in events:
                yield event
                last = event.seq
                if event.type is RunEventType.RUN and RunStatus(event.data["status"]).value in _ENDED:
                    return
            if events:
                continue
            run = await get_run(ports, organization_id, run_id)
            if run.is_terminal and last >= run.last_seq:
                return
            if subscription is not None:
                woke = await subscription.wait(keepalive_seconds)
            else:  # no bus (an embedder's Ports): look again every little while
                await asyncio.sleep(min(keepalive_seconds, NO_BUS_POLL_SECONDS))
                woke = True
            if not woke:
                yield None
    finally:
        if subscription is not None:
            subscription.close()


_ENDED = frozenset({RunStatus.SUCCEEDED.value, RunStatus.FAILED.value, RunStatus.CANCELLED.value})
