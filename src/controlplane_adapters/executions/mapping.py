"""Executions and their events, between rows and domain objects (a change converts only what changed)."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from controlplane_adapters.executions.table import execution_events, executions
from controlplane_adapters.sql.columns import to_json
from controlplane_adapters.sql.rows import RowMapping
from controlplane_domain.analytics.facts import reported_tokens
from controlplane_domain.executions.entity import Execution, ExecutionEvent, RunWith

RUN_WITH_FIELDS = tuple(each.name for each in fields(RunWith))
"""What an execution is run with: taken from its agent and model by `run_with_of` when an agent's is added."""

TOKEN_COLUMNS = ("prompt_tokens", "completion_tokens")
"""Columns derived from `usage` (`analytics.facts.reported_tokens`): written whenever `usage` is."""

EXECUTION_ROWS = RowMapping(
    Execution,
    executions,
    computed={
        "prompt_tokens": lambda execution: reported_tokens(execution.usage)[0],
        "completion_tokens": lambda execution: reported_tokens(execution.usage)[1],
    },
)
execution_to_row, execution_to_domain = EXECUTION_ROWS.to_row, EXECUTION_ROWS.to_domain

EVENT_ROWS = RowMapping(ExecutionEvent, execution_events)
event_to_row, event_to_domain = EVENT_ROWS.to_row, EVENT_ROWS.to_domain


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
