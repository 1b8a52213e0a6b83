"""Executions and their events, between rows and domain objects (a change converts only what changed)."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

from controlplane_adapters.sql.columns import to_json
from controlplane_domain.executions.entity import EventType, Execution, ExecutionEvent, ExecutionStatus, TargetType

EXECUTION_FIELDS = (
    "id", "organization_id", "agent_id", "team_id", "worker_queue_id", "prompt", "response", "error", "attempt",
    "max_attempts", "worker_id", "lease_expires_at", "cancel_requested", "last_seq", "created_at", "updated_at",
    "queued_at", "started_at", "finished_at", "workflow_run_id", "workflow_step_id",
    "trace_parent",
)  # fmt: skip


def execution_to_row(execution: Execution) -> dict[str, Any]:
    row = {name: getattr(execution, name) for name in EXECUTION_FIELDS}
    row.update(target_type=execution.target_type.value, status=execution.status.value, usage=to_json(execution.usage))
    return row


def execution_changes(before: Execution, after: Execution, columns: tuple[str, ...]) -> dict[str, Any]:
    """Of the given columns, those whose value differs between two states of an execution, with the value
    `execution_to_row(after)` gives them (only the changed values are converted)."""
    read = _reader(columns)  # every column's value in one call (two `getattr` a column cost more than the rest)
    changes = {}
    for name, value, old in zip(columns, read(after), read(before), strict=True):
        if value != old:
            changes[name] = value.value if name in _ENUM_COLUMNS else to_json(value) if name == "usage" else value
    return changes


@functools.cache
def _reader(columns: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if len(columns) == 1:  # attrgetter of one name gives the value itself, not a tuple of one
        name = columns[0]
        return lambda execution: (getattr(execution, name),)
    read: Callable[[Any], tuple[Any, ...]] = operator.attrgetter(*columns)
    return read


_ENUM_COLUMNS = frozenset({"target_type", "status"})


def execution_to_domain(row: Any) -> Execution:
    return Execution(
        **{name: getattr(row, name) for name in EXECUTION_FIELDS},
        target_type=TargetType(row.target_type),
        status=ExecutionStatus(row.status),
        usage=dict(row.usage),
    )


def event_to_row(event: ExecutionEvent) -> dict[str, Any]:
    return {
        "execution_id": event.execution_id,
        "seq": event.seq,
        "organization_id": event.organization_id,
        "type": event.type.value,
        "data": to_json(event.data),
        "attempt": event.attempt,
        "created_at": event.created_at,
    }


def event_to_domain(row: Any) -> ExecutionEvent:
    return ExecutionEvent(
        execution_id=row.execution_id,
        organization_id=row.organization_id,
        seq=row.seq,
        type=EventType(row.type),
        data=dict(row.data),
        attempt=row.attempt,
        created_at=row.created_at,
    )
