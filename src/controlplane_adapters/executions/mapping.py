"""Executions and their events, between rows and domain objects (a change converts only what changed)."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from controlplane_adapters.sql.columns import to_json
from controlplane_domain.analytics.facts import reported_tokens
from controlplane_domain.executions.entity import (
    EventType,
    Execution,
    ExecutionEvent,
    ExecutionStatus,
    RunWith,
    TargetType,
)

RUN_WITH_FIELDS = tuple(each.name for each in fields(RunWith))
"""What an execution is run with: taken from its agent and model by `run_with_of` when an agent's is added."""

EXECUTION_FIELDS = (
    "id", "organization_id", "agent_id", "team_id", "worker_queue_id", "prompt", "response", "error", "attempt",
    "max_attempts", "worker_id", "lease_expires_at", "cancel_requested", "last_seq", "created_at", "updated_at",
    "queued_at", "started_at", "finished_at", "workflow_run_id", "workflow_step_id",
    "trace_parent", *RUN_WITH_FIELDS,
)  # fmt: skip


TOKEN_COLUMNS = ("prompt_tokens", "completion_tokens")
"""Columns derived from `usage` (`analytics.facts.reported_tokens`): written whenever `usage` is."""


def execution_to_row(execution: Execution) -> dict[str, Any]:
    row = {name: getattr(execution, name) for name in EXECUTION_FIELDS}
    row.update(target_type=execution.target_type.value, status=execution.status.value, usage=to_json(execution.usage))
    row["prompt_tokens"], row["completion_tokens"] = reported_tokens(execution.usage)
    return row


def execution_changes(before: Execution, after: Execution, columns: tuple[str, ...]) -> dict[str, Any]:
    """Of the given columns, those whose value differs between two states of an execution, with the value
    `execution_to_row(after)` gives them (only the changed values are converted; the token columns go with a
    change of `usage`)."""
    names, read = _reader(columns)  # every column's value in one call (two `getattr` a column cost more)
    changes = {}
    for name, value, old in zip(names, read(after), read(before), strict=True):
        if value != old:
            changes[name] = value.value if name in _ENUM_COLUMNS else to_json(value) if name == "usage" else value
    if names is not columns and after.usage != before.usage:  # the token columns asked, and usage changed
        for name, value, old in zip(
            TOKEN_COLUMNS, reported_tokens(after.usage), reported_tokens(before.usage), strict=True
        ):
            if value != old and name in columns:
                changes[name] = value
    return changes


@functools.cache
def _reader(all_columns: tuple[str, ...]) -> tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]]:
    """The columns that are attributes of an execution (all but the token columns), and their reader."""
    columns = tuple(name for name in all_columns if name not in TOKEN_COLUMNS)
    if len(columns) == len(all_columns):
        columns = all_columns  # the same tuple: `execution_changes` knows by identity that no token column is asked
    if not columns:
        return columns, lambda execution: ()
    if len(columns) == 1:  # attrgetter of one name gives the value itself, not a tuple of one
        name = columns[0]
        return columns, lambda execution: (getattr(execution, name),)
    read: Callable[[Any], tuple[Any, ...]] = operator.attrgetter(*columns)
    return columns, read


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
