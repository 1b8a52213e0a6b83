"""An execution's copies and what a change of one writes: the hot paths' shortcuts must equal the plain ways."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controlplane_adapters.executions import mapping
from controlplane_domain.executions.entity import Execution, ExecutionStatus, TargetType

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
BASE = Execution(
    id="e1", organization_id="org", target_type=TargetType.AGENT, agent_id="a1", team_id=None,
    worker_queue_id="q1", prompt="p", status=ExecutionStatus.QUEUED, created_at=NOW, updated_at=NOW,
    queued_at=NOW,
)  # fmt: skip

CHANGES: dict[str, st.SearchStrategy[Any]] = {
    "status": st.sampled_from(list(ExecutionStatus)),
    "response": st.none() | st.text(max_size=5),
    "usage": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    "attempt": st.integers(0, 5),
    "worker_id": st.none() | st.text(max_size=5),
    "lease_expires_at": st.none() | st.just(NOW + timedelta(seconds=30)),
    "cancel_requested": st.booleans(),
    "last_seq": st.integers(0, 100),
    "updated_at": st.just(NOW + timedelta(seconds=1)),
}


@given(st.fixed_dictionaries({}, optional=CHANGES))
def test_a_copy_with_changes_equals_the_one_replace_makes(changes: dict[str, Any]) -> None:
    before = dataclasses.astuple(BASE)
    copy = BASE.changed(**changes)
    assert copy == dataclasses.replace(BASE, **changes)
    assert dataclasses.astuple(BASE) == before  # the original is untouched


def test_a_copy_stays_frozen_and_refuses_what_is_no_field() -> None:
    copy = BASE.changed(last_seq=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.last_seq = 5  # type: ignore[misc]
    with pytest.raises(TypeError, match="not fields of an execution: \\['seq'\\]"):
        BASE.changed(seq=4)


@given(st.fixed_dictionaries({}, optional=CHANGES))
def test_the_stored_changes_are_the_columns_whose_stored_values_differ(changes: dict[str, Any]) -> None:
    """What `record` writes of a change: the columns in which the two stored rows differ, as stored."""
    after = BASE.changed(**changes)
    old, new = mapping.execution_to_row(BASE), mapping.execution_to_row(after)
    columns = tuple(name for name in new if name not in ("id", "organization_id"))
    expected = {name: new[name] for name in columns if old[name] != new[name]}
    assert mapping.execution_changes(BASE, after, columns) == expected
    for name in columns:  # and of one column alone
        assert mapping.execution_changes(BASE, after, (name,)) == {k: v for k, v in expected.items() if k == name}
