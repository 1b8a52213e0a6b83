"""Executions: the lifecycle of one task run by a worker, and its append-only event log."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import StrEnum
from typing import Any

from controlplane_domain.agents.entity import Agent
from controlplane_domain.config import JSONObject
from controlplane_domain.errors import Conflict
from controlplane_domain.llm_models.entity import LlmModel

MAX_ATTEMPT = 2**31 - 1  # attempts are signed 32-bit numbers in every store
PROMPT_MAX_LENGTH = 200_000  # an execution's prompt, in characters


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
HELD = frozenset({ExecutionStatus.RUNNING, ExecutionStatus.WAITING_FOR_INPUT})  # a worker holds it (its lease)
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
    PLAN = "plan"
    """The planning of a task plan (no agent, no team): its lease's `resolved.planning` says what to plan."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """An agent or a team a step may use."""

    id: str
    name: str
    description: str | None = None
    capabilities: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanningTask:
    """What a planning execution's lease carries as `resolved.planning` (task_plans/planning.py builds it)."""

    plan_id: str
    task: str
    agents: tuple[Candidate, ...]
    teams: tuple[Candidate, ...]
    instructions: str
    plan_schema: JSONObject


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
    workflow_run_id: str | None = None
    """The workflow run whose step this execution runs (None for most): its end advances that run."""
    workflow_step_id: str | None = None
    trace_parent: str | None = None
    """The W3C `traceparent` of the request that created it when tracing is on: its later steps join that trace."""
    # What it was run with (`RunWith`), as it was when it was created and kept whatever happens to them later:
    # its agent's or team's name (None: a plan's, or unknown, docs/analytics.md "History"), its agent's model (the
    # model record's `value`, else the `model_id` as written; a team's own execution has none), that model's
    # prices then (None: not priced), and its agent's team then (a team's own execution: `team_id`).
    target_name: str | None = None
    model: str | None = None
    input_cost_per_million: float | None = None
    output_cost_per_million: float | None = None
    agent_team_id: str | None = None

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def has_owner(self) -> bool:
        """Whether its end changes what it works for, in the same unit of work: a workflow run (a step's
        execution) or a task plan (its planning execution)."""
        return self.workflow_run_id is not None or self.target_type is TargetType.PLAN

    def transition(self, to: ExecutionStatus, now: datetime, **changes: Any) -> Execution:
        """The execution in its new status, with that transition's timestamp; IllegalTransition otherwise."""
        if to not in ALLOWED.get(self.status, frozenset()):
            raise IllegalTransition(f"an execution that is {self.status} cannot become {to}")
        stamp = TIMESTAMP_OF.get(to)
        if stamp is not None and not (to is S.QUEUED and self.queued_at is not None):
            changes[stamp] = now
        return self.changed(status=to, updated_at=now, **changes)

    def changed(self, **changes: Any) -> Execution:
        """The execution with some fields changed, as `dataclasses.replace` makes it, in a third of its time (that
        one goes through `__init__` with every field; an execute, lease and completion make five to seven copies
        of 22 fields)."""
        if not changes.keys() <= _EXECUTION_FIELDS:
            raise TypeError(f"not fields of an execution: {sorted(changes.keys() - _EXECUTION_FIELDS)}")
        copy = object.__new__(Execution)
        for name, read, write in _EXECUTION_SLOTS:
            write(copy, changes[name] if name in changes else read(self))
        return copy


_EXECUTION_FIELD_ORDER = tuple(each.name for each in fields(Execution))
_EXECUTION_FIELDS = frozenset(_EXECUTION_FIELD_ORDER)
# Each field's slot, read and written through its descriptor: the frozen dataclass's own `object.__setattr__`
# looks the name up on the type every time (a large part of what a copy cost).
_EXECUTION_SLOTS: tuple[tuple[str, Callable[[Any], Any], Callable[[Any, Any], None]], ...] = tuple(
    (name, vars(Execution)[name].__get__, vars(Execution)[name].__set__) for name in _EXECUTION_FIELD_ORDER
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunWith:
    """What an execution is run with, taken from its agent (or team) and the agent's model when it is created
    and kept on it: renaming, repricing or deleting them later changes nothing of its history."""

    target_name: str | None = None
    model: str | None = None
    input_cost_per_million: float | None = None
    output_cost_per_million: float | None = None
    agent_team_id: str | None = None

    def applied(self, execution: Execution) -> Execution:
        return execution.changed(
            target_name=self.target_name,
            model=self.model,
            input_cost_per_million=self.input_cost_per_million,
            output_cost_per_million=self.output_cost_per_million,
            agent_team_id=self.agent_team_id,
        )


def agent_run_with(agent: Agent, models: Iterable[LlmModel]) -> RunWith:
    """What an agent's execution is run with: its name, its team, its model (the organization's model record
    its `model_id` names by id, else by value; the `model_id` as written when none does) and that model's
    prices. `models`: the agent's organization's."""
    model = None
    if agent.model_id is not None:
        known = list(models)
        model = next((each for each in known if each.id == agent.model_id), None) or next(
            (each for each in known if each.value == agent.model_id), None
        )
    return RunWith(
        target_name=agent.name,
        model=model.value if model is not None else agent.model_id,
        input_cost_per_million=model.input_cost_per_million if model is not None else None,
        output_cost_per_million=model.output_cost_per_million if model is not None else None,
        agent_team_id=agent.team_id,
    )


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


@dataclass(frozen=True, slots=True, kw_only=True)
class NewEvent:
    """An event to append, before it is numbered."""

    type: EventType
    data: JSONObject = field(default_factory=dict)


def status_event(execution: Execution, **extra: Any) -> NewEvent:
    """The `status` event that tells an execution's new status (and attempt)."""
    return NewEvent(
        type=EventType.STATUS, data={"status": execution.status.value, "attempt": execution.attempt, **extra}
    )


def numbered(execution: Execution, events: Sequence[NewEvent], now: datetime) -> tuple[list[ExecutionEvent], Execution]:
    """The events with the next sequence numbers, and the execution that remembers the last one."""
    seq = execution.last_seq
    rows = []
    for event in events:
        seq += 1
        rows.append(
            ExecutionEvent(
                execution_id=execution.id,
                organization_id=execution.organization_id,
                seq=seq,
                type=event.type,
                data=event.data,
                attempt=execution.attempt,
                created_at=now,
            )
        )
    return rows, execution.changed(last_seq=seq)


@dataclass(frozen=True, slots=True)
class LeaseTerms:
    """What a lease decides besides the execution's own counters: who holds it, from when, until when."""

    worker_id: str
    now: datetime
    expires_at: datetime


def lease_order(execution: Execution) -> tuple[datetime, str]:
    """Which queued execution of a queue a lease takes: the least by this key (queued first, then by id)."""
    return execution.queued_at or execution.created_at, execution.id


def leased(execution: Execution, terms: LeaseTerms) -> tuple[Execution, list[ExecutionEvent]]:
    """A queued execution handed to a worker: running, attempt + 1, held until `terms.expires_at`, told by one
    `status` event (status, attempt, worker_id). The lease rule, with `lease_order`; a store that writes it as one
    statement is held to it by `tests/contract/test_lease_rule.py`, a property test on every store."""
    running = execution.transition(
        S.RUNNING,
        terms.now,
        attempt=execution.attempt + 1,
        worker_id=terms.worker_id,
        lease_expires_at=terms.expires_at,
    )
    rows, running = numbered(running, [status_event(running, worker_id=terms.worker_id)], terms.now)
    return running, rows
