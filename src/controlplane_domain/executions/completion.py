"""A running execution's events and end: the worker appends events and completes its attempt; a client cancels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from controlplane_domain.config import JSONObject
from controlplane_domain.errors import Conflict, TransientFailure, ValidationFailed
from controlplane_domain.executions.entity import SERVER_EVENTS, EventType, Execution, ExecutionStatus, NewEvent
from controlplane_domain.executions.entity import numbered as _numbered
from controlplane_domain.executions.entity import status_event as _status
from controlplane_domain.executions.transitions import Change, change, check_lease, done_event
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient

S = ExecutionStatus
FINISHING = frozenset({S.COMPLETED, S.FAILED, S.CANCELLED})
MAX_EVENTS_PER_BATCH = 500


@dataclass(frozen=True, slots=True, kw_only=True)
class CompleteCommand:
    worker_id: str
    attempt: int
    status: ExecutionStatus
    response: str | None = None
    error: str | None = None
    usage: JSONObject = field(default_factory=dict)


@retry_transient
async def append_events(
    ports: Ports, organization_id: str, execution_id: str, worker_id: str, attempt: int, events: Sequence[NewEvent]
) -> Execution:
    """Append a batch of the worker's events; a stale attempt is refused (409)."""
    if len(events) > MAX_EVENTS_PER_BATCH:
        raise ValidationFailed("events", f"at most {MAX_EVENTS_PER_BATCH} events per batch")
    for index, event in enumerate(events):
        if event.type in SERVER_EVENTS:
            raise ValidationFailed(f"events.{index}.type", f"'{event.type}' events are written by the service")

    def add(execution: Execution, now: datetime) -> Change:
        check_lease(execution, worker_id, attempt)
        return execution, events

    return await change(ports, organization_id, execution_id, add, guess=True)


@retry_transient
async def complete(ports: Ports, organization_id: str, execution_id: str, command: CompleteCommand) -> Execution:
    """Finish the current attempt; repeating the same completion changes nothing, a stale one is 409."""
    if command.status not in FINISHING:
        raise ValidationFailed("status", "must be completed, failed or cancelled")

    def finish(execution: Execution, now: datetime) -> Change | Execution:
        if (
            execution.is_terminal
            and execution.attempt == command.attempt
            and execution.worker_id == command.worker_id
            and execution.status is command.status
            and execution.response == command.response
            and execution.error == command.error  # (the reaper's failure of an expired lease is not this one)
        ):
            return execution
        check_lease(execution, command.worker_id, command.attempt)
        finished = execution.transition(
            command.status,
            now,
            response=command.response,
            error=command.error,
            usage=dict(command.usage),
            lease_expires_at=None,
        )
        return finished, [_status(finished), done_event(finished)]

    return await change(ports, organization_id, execution_id, finish, guess=True)


@retry_transient
async def cancel(ports: Ports, organization_id: str, execution_id: str) -> Execution:
    """Cancel now when no worker holds it; otherwise ask its worker (via heartbeat commands) to stop."""

    def stop(execution: Execution, now: datetime) -> Change | Execution:
        if execution.is_terminal:
            raise Conflict(f"the execution already finished ({execution.status})", {"status": execution.status.value})
        if execution.cancel_requested and execution.status not in (S.PENDING, S.QUEUED):
            return execution
        return stopped(execution, now, "cancelled before a worker started it")

    return await change(ports, organization_id, execution_id, stop)


def stopped(execution: Execution, now: datetime, error: str) -> Change:
    """The unfinished execution cancelled now (with `error`) while no worker holds it, else its worker asked to
    stop (its end then cancels it); with the events that tell it."""
    if execution.status in (S.PENDING, S.QUEUED):
        cancelled = execution.transition(S.CANCELLED, now, error=error)
        return cancelled, [_status(cancelled), done_event(cancelled)]
    note = NewEvent(type=EventType.LOG, data={"message": "cancellation requested", "cancel_requested": True})
    return execution.changed(cancel_requested=True, updated_at=now), [note]


async def stop_with_owner(uow: UnitOfWork, execution: Execution, now: datetime, error: str, changed: str) -> Execution:
    """`stopped`, recorded in the unit of work of what owns the execution (a task plan, a workflow run), which
    locked it: only a broken store fails, TransientFailure(`changed`)."""
    stopping, events = stopped(execution, now, error)
    rows, stopping = _numbered(stopping, events, now)
    if not await uow.executions.record(execution, stopping, rows):
        raise TransientFailure(changed)
    return stopping
