"""Executions: the lifecycle of one task run by a worker, and its append-only event log."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from controlplane_domain.config import JSONObject
from controlplane_domain.errors import Conflict


class ExecutionStatus(StrEnum):
    PENDING = "pending"
    QUEUED = "queued"
    RUNNING = "running"
    WAITING_FOR_INPUT = "waiting_for_input"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"


TERMINAL = frozenset(
    {ExecutionStatus.COMPLETED, ExecutionStatus.FAILED, ExecutionStatus.CANCELLED, ExecutionStatus.TIMED_OUT}
)
S = ExecutionStatus
ALLOWED: dict[ExecutionStatus, frozenset[ExecutionStatus]] = {
    S.PENDING: frozenset({S.QUEUED, S.CANCELLED, S.FAILED}),
    S.QUEUED: frozenset({S.RUNNING, S.CANCELLED, S.FAILED, S.TIMED_OUT}),
    S.RUNNING: frozenset({S.WAITING_FOR_INPUT, S.QUEUED, S.COMPLETED, S.FAILED, S.CANCELLED, S.TIMED_OUT}),
    S.WAITING_FOR_INPUT: frozenset({S.RUNNING, S.FAILED, S.CANCELLED, S.TIMED_OUT}),
}
TIMESTAMP_OF = {
    S.QUEUED: "queued_at",
    S.RUNNING: "started_at",
    S.COMPLETED: "finished_at",
    S.FAILED: "finished_at",
    S.CANCELLED: "finished_at",
    S.TIMED_OUT: "finished_at",
}


class TargetType(StrEnum):
    AGENT = "agent"
    TEAM = "team"


class EventType(StrEnum):
    STATUS = "status"
    MESSAGE_CHUNK = "message_chunk"
    MESSAGE = "message"
    TOOL_STARTED = "tool_started"
    TOOL_COMPLETED = "tool_completed"
    ERROR = "error"
    LOG = "log"
    USAGE = "usage"
    DONE = "done"


SERVER_EVENTS = frozenset({EventType.STATUS, EventType.DONE})


class IllegalTransition(Conflict):
    """The execution's current status does not allow the requested one."""

    code = "ILLEGAL_TRANSITION"


@dataclass(frozen=True, slots=True, kw_only=True)
class Execution:
    id: str
    organization_id: str
    target_type: TargetType
    agent_id: str | None
    team_id: str | None
    worker_queue_id: str
    prompt: str
    status: ExecutionStatus
    response: str | None = None
    error: str | None = None
    usage: JSONObject = field(default_factory=dict)
    attempt: int = 0
    max_attempts: int = 3
    worker_id: str | None = None
    lease_expires_at: datetime | None = None
    cancel_requested: bool = False
    last_seq: int = 0
    created_at: datetime
    updated_at: datetime
    queued_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    def transition(self, to: ExecutionStatus, now: datetime, **changes: Any) -> Execution:
        """The execution in its new status, with that transition's timestamp; IllegalTransition otherwise."""
        if to not in ALLOWED.get(self.status, frozenset()):
            raise IllegalTransition(f"an execution that is {self.status} cannot become {to}")
        stamp = TIMESTAMP_OF.get(to)
        if stamp is not None and not (to is S.QUEUED and self.queued_at is not None):
            changes[stamp] = now
        return replace(self, status=to, updated_at=now, **changes)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionEvent:
    """One entry of an execution's append-only log; `seq` is 1, 2, 3... per execution, without gaps."""

    execution_id: str
    organization_id: str
    seq: int
    type: EventType
    data: JSONObject
    attempt: int
    created_at: datetime
