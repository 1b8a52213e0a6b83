"""The outbox's writers: each event is written in the unit of work of the change that causes it (the caller
commits), as one delivery for each enabled webhook of the organization that listens to it; nothing at all is
written, or read, where this node knows that nobody listens (listeners.py)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from controlplane_domain.executions.entity import EventType as ExecutionEventType
from controlplane_domain.executions.entity import Execution, ExecutionEvent, ExecutionStatus
from controlplane_domain.webhooks.entity import EVERY_EVENT, Event, EventType, body

if TYPE_CHECKING:
    from controlplane_domain.jobs.entity import JobRun
    from controlplane_domain.ports import Ports, UnitOfWork
    from controlplane_domain.workers.entity import Worker, WorkerStatus
    from controlplane_domain.workflows.entity import RunStatus, WorkflowRun

_positions = itertools.count()
RESPONSE_MAX_CHARACTERS = 65_536
"""An execution's response is in its event up to this size (else `response` is null and `response_truncated`)."""


async def listening(ports: Ports, uow: UnitOfWork, organization_id: str, event_type: str) -> bool:
    """Whether an enabled webhook of the organization may listen to `event_type` (no cache wired: maybe)."""
    cache = ports.webhook_listeners
    if cache is None:
        return True
    listened = cache.known(organization_id)
    if listened is None:
        generation = cache.generation
        listened = await uow.webhooks.listened(organization_id)
        cache.learned(organization_id, generation, listened)
    return EVERY_EVENT in listened or event_type in listened


async def emit(
    ports: Ports, uow: UnitOfWork, organization_id: str, event_type: str, data: dict[str, Any], now: datetime
) -> bool:
    """Write the event for its listeners in `uow`; whether any delivery was written (publish `listeners.DUE` after
    the commit then)."""
    if not await listening(ports, uow, organization_id, event_type):
        return False
    event = Event(
        id=ports.ids.new_id(),
        organization_id=organization_id,
        type=event_type,
        payload=body(event_type, now, data),
        created_at=now,
        position=next(_positions),
    )
    return await uow.webhooks.enqueue(event) > 0


ENDINGS = {
    ExecutionStatus.COMPLETED: EventType.EXECUTION_COMPLETED,
    ExecutionStatus.FAILED: EventType.EXECUTION_FAILED,
    ExecutionStatus.TIMED_OUT: EventType.EXECUTION_FAILED,
}


async def execution_changed(
    ports: Ports, uow: UnitOfWork, before: Execution | None, after: Execution, rows: Sequence[ExecutionEvent]
) -> bool:
    """`execution.completed` / `execution.failed` (failed or timed out) when the change ends the execution, and an
    `error` event for each `error` event among `rows`. Whether any delivery was written."""
    wrote = False
    ending = ENDINGS.get(after.status)
    if ending is not None and (before is None or not before.is_terminal):
        wrote = await emit(ports, uow, after.organization_id, ending, execution_data(after), after.updated_at)
    for row in rows:
        if row.type is ExecutionEventType.ERROR:
            data = {"execution_id": after.id, "seq": row.seq, "attempt": row.attempt, "data": row.data,
                    "agent_id": after.agent_id, "team_id": after.team_id}  # fmt: skip
            wrote = await emit(ports, uow, after.organization_id, EventType.ERROR, data, row.created_at) or wrote
    return wrote


def execution_data(execution: Execution) -> dict[str, Any]:
    response = execution.response
    truncated = response is not None and len(response) > RESPONSE_MAX_CHARACTERS
    return {
        "id": execution.id,
        "status": execution.status.value,
        "agent_id": execution.agent_id,
        "team_id": execution.team_id,
        "worker_queue_id": execution.worker_queue_id,
        "worker_id": execution.worker_id,
        "attempt": execution.attempt,
        "response": None if truncated else response,
        "response_truncated": truncated,
        "error": execution.error,
        "usage": execution.usage,
        "workflow_run_id": execution.workflow_run_id,
        "workflow_step_id": execution.workflow_step_id,
        "created_at": execution.created_at.isoformat(),
        "started_at": execution.started_at and execution.started_at.isoformat(),
        "finished_at": execution.finished_at and execution.finished_at.isoformat(),
    }


async def run_status_changed(
    ports: Ports, uow: UnitOfWork, previous: RunStatus | None, run: WorkflowRun, now: datetime
) -> bool:
    """`workflow_run.status_changed` when the run's status is not `previous` (None: the run is new)."""
    if previous is run.status:
        return False
    data = {"id": run.id, "workflow_id": run.workflow_id, "status": run.status.value,
            "previous_status": None if previous is None else previous.value, "error": run.error,
            "started_at": run.started_at and run.started_at.isoformat(),
            "finished_at": run.finished_at and run.finished_at.isoformat()}  # fmt: skip
    return await emit(ports, uow, run.organization_id, EventType.WORKFLOW_RUN_STATUS_CHANGED, data, now)


async def worker_status_changed(
    ports: Ports, uow: UnitOfWork, previous: WorkerStatus | None, worker: Worker, now: datetime
) -> bool:
    """`worker.status_changed`: the worker came online (`previous` offline, or None: it registered) or went
    offline (it said so, or fell silent)."""
    data = {"worker_id": worker.worker_id, "environment_name": worker.environment_name,
            "status": worker.status.value, "previous_status": None if previous is None else previous.value,
            "online": worker.status.value != "offline", "queue_id": worker.queue_id,
            "last_heartbeat_at": worker.last_heartbeat_at.isoformat()}  # fmt: skip
    return await emit(ports, uow, worker.organization_id, EventType.WORKER_STATUS_CHANGED, data, now)


async def jobs_fired(ports: Ports, uow: UnitOfWork, runs: Sequence[JobRun]) -> bool:
    """`job.fired` for each run recorded (fired, or skipped or failed: its status says)."""
    wrote = False
    for run in runs:
        data = {"job_id": run.job_id, "run_id": run.id, "trigger": run.trigger.value, "status": run.status.value,
                "execution_id": run.execution_id, "workflow_run_id": run.workflow_run_id,
                "skipped_reason": run.skipped_reason,
                "scheduled_for": run.scheduled_for and run.scheduled_for.isoformat(),
                "fired_at": run.fired_at.isoformat()}  # fmt: skip
        wrote = await emit(ports, uow, run.organization_id, EventType.JOB_FIRED, data, run.fired_at) or wrote
    return wrote
