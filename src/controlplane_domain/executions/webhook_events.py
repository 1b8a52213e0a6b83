"""The webhook events an execution's change announces: `execution.completed`, `execution.failed` and `error`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from controlplane_domain.executions.entity import EventType as ExecutionEventType
from controlplane_domain.executions.entity import Execution, ExecutionEvent, ExecutionStatus
from controlplane_domain.webhooks.entity import Event, EventType
from controlplane_domain.webhooks.events import prepare

if TYPE_CHECKING:
    from controlplane_domain.ports import Ports, UnitOfWork

RESPONSE_MAX_CHARACTERS = 65_536
"""An execution's response is in its event up to this size (else `response` is null and `response_truncated`)."""


ENDINGS = {
    ExecutionStatus.COMPLETED: EventType.EXECUTION_COMPLETED,
    ExecutionStatus.FAILED: EventType.EXECUTION_FAILED,
    ExecutionStatus.TIMED_OUT: EventType.EXECUTION_FAILED,
}


async def execution_changed(
    ports: Ports, uow: UnitOfWork, before: Execution | None, after: Execution, rows: Sequence[ExecutionEvent]
) -> list[Event]:
    """`execution.completed` / `execution.failed` (failed or timed out) when the change ends the execution, and an
    `error` event for each `error` event among `rows`: the webhook events the change writes with it (its
    `outbox`: `executions.record(..., outbox=...)`), none where nobody listens."""
    events: list[Event] = []
    ending = ENDINGS.get(after.status)
    if ending is not None and (before is None or not before.is_terminal):
        event = await prepare(ports, uow, after.organization_id, ending, execution_data(after), after.updated_at)
        events.extend(() if event is None else (event,))
    for row in rows:
        if row.type is ExecutionEventType.ERROR:
            data = {"execution_id": after.id, "seq": row.seq, "attempt": row.attempt, "data": row.data,
                    "agent_id": after.agent_id, "team_id": after.team_id}  # fmt: skip
            event = await prepare(ports, uow, after.organization_id, EventType.ERROR, data, row.created_at)
            events.extend(() if event is None else (event,))
    return events


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
