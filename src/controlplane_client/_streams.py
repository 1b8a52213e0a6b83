"""The events the two streams carry, and how each ends."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from controlplane_client._core import SseEvent
from controlplane_wire.executions import ExecutionEvent


class RunEvent(msgspec.Struct, kw_only=True):
    """One event of a workflow run's stream: `run` (the run's status) or `step` (a step's)."""

    run_id: str
    seq: int
    type: str
    data: dict[str, Any]
    created_at: datetime


def execution_event(event: SseEvent) -> ExecutionEvent:
    return msgspec.json.decode(event.data, type=ExecutionEvent)


def execution_ended(event: ExecutionEvent) -> bool:
    """The stream ends after its `done` event."""
    return str(event.type) == "done"


def run_event(event: SseEvent) -> RunEvent:
    return msgspec.json.decode(event.data, type=RunEvent)


RUN_ENDED = frozenset({"succeeded", "failed", "cancelled"})


def run_ended(event: RunEvent) -> bool:
    return event.type == "run" and event.data.get("status") in RUN_ENDED
