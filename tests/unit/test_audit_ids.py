"""Audit event ids are UUIDv7 and strictly increasing in a process (the log's order among events of one time)."""

from __future__ import annotations

import uuid

from controlplane_adapters.audit.ids import TimeOrderedIds


def test_ids_are_version_7_and_strictly_increasing() -> None:
    ids = TimeOrderedIds()
    made = [ids.new_id() for _ in range(5000)]  # many share a millisecond: the counter orders them
    assert made == sorted(made)
    assert len(set(made)) == len(made)
    parsed = [uuid.UUID(each) for each in made]
    assert {(each.version, each.variant) for each in parsed} == {(7, uuid.RFC_4122)}
