"""Workflows: a named graph of steps (each an agent's or a team's prompt), and its runs, each step run as an
execution on a worker queue once every step it depends on succeeded."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.config import JSONObject

MAX_STEPS = 100
MAX_STEP_ATTEMPTS = 10
TIMEOUT_MAX_SECONDS = 7 * 24 * 3600  # a step's timeout


GONE = "no longer exists"
"""How a step's error ends when its queue, agent or team is gone (deleted since the definition was saved)."""


class RunStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class StepStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


RUN_TERMINAL = frozenset({RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED})
STEP_TERMINAL = frozenset({StepStatus.SUCCEEDED, StepStatus.FAILED, StepStatus.SKIPPED, StepStatus.CANCELLED})


@dataclass(frozen=True, slots=True, kw_only=True)
class StepDefinition:
    """One step: whom to ask (an agent or a team), what (a prompt with `{{input.x}}` and `{{steps.<id>.output}}`),
    after which steps, on which queue (the run's when None), how many times at most (1: no retry)."""

    id: str
    agent_id: str | None = None
    team_id: str | None = None
    prompt: str
    depends_on: tuple[str, ...] = ()
    worker_queue_id: str | None = None
    max_attempts: int = 1
    timeout_seconds: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Workflow:
    audited: ClassVar[Audited] = Audited("workflow")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    description: str | None
    steps: tuple[StepDefinition, ...]
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRun:
    """Where one step of a run stands: its status, its current execution and attempt, its output once it
    succeeded, why it failed; `timeout_at` (a step with `timeout_seconds`, while it runs): the earliest instant
    its execution can be past its timeout, when the timeout sweep looks at it next (workflows/timeouts.py)."""

    id: str
    status: StepStatus = StepStatus.PENDING
    execution_id: str | None = None
    attempt: int = 0
    output: str | None = None
    error: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    timeout_at: datetime | None = None

    @property
    def is_terminal(self) -> bool:
        return self.status in STEP_TERMINAL


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkflowRun:
    """A run of a workflow: the definition as it was when the run started (a later change of the workflow does not
    reach it), the input, the queue, each step's state; `last_seq` numbers its events."""

    id: str
    organization_id: str
    workflow_id: str
    status: RunStatus
    input: JSONObject
    worker_queue_id: str
    definition: tuple[StepDefinition, ...]
    steps: tuple[StepRun, ...]
    error: str | None = None
    last_seq: int = 0
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def is_terminal(self) -> bool:
        return self.status in RUN_TERMINAL

    @property
    def timeout_check_at(self) -> datetime | None:
        """When the timeout sweep looks at this run next: the earliest `timeout_at` of its running steps (None
        when no running step has a timeout, or the run ended). The stores keep it in an indexed column."""
        if self.is_terminal:
            return None
        due = [s.timeout_at for s in self.steps if s.status is StepStatus.RUNNING and s.timeout_at is not None]
        return min(due, default=None)

    def step(self, step_id: str) -> StepRun | None:
        return next((step for step in self.steps if step.id == step_id), None)

    def definition_of(self, step_id: str) -> StepDefinition:
        return next(step for step in self.definition if step.id == step_id)

    def with_step(self, changed: StepRun) -> WorkflowRun:
        return replace(self, steps=tuple(changed if step.id == changed.id else step for step in self.steps))


class RunEventType(enum.StrEnum):
    RUN = "run"
    STEP = "step"


@dataclass(frozen=True, slots=True, kw_only=True)
class RunEvent:
    """One transition of a run or of one of its steps; `seq` is 1, 2, 3... per run."""

    run_id: str
    organization_id: str
    seq: int
    type: RunEventType
    data: JSONObject
    created_at: datetime


@dataclass(frozen=True, slots=True)
class NewRunEvent:
    type: RunEventType
    data: dict[str, Any] = field(default_factory=dict)


def run_event(run: WorkflowRun) -> NewRunEvent:
    return NewRunEvent(RunEventType.RUN, {"status": run.status.value, "error": run.error})


def step_event(step: StepRun) -> NewRunEvent:
    data = {
        "step_id": step.id,
        "status": step.status.value,
        "execution_id": step.execution_id,
        "attempt": step.attempt,
        "error": step.error,
    }
    return NewRunEvent(RunEventType.STEP, data)


def numbered_run(run: WorkflowRun, events: list[NewRunEvent], now: datetime) -> tuple[WorkflowRun, list[RunEvent]]:
    """The events with the run's next sequence numbers, and the run that remembers the last one."""
    rows = [
        RunEvent(
            run_id=run.id,
            organization_id=run.organization_id,
            seq=run.last_seq + index,
            type=event.type,
            data=event.data,
            created_at=now,
        )
        for index, event in enumerate(events, start=1)
    ]
    return replace(run, last_seq=run.last_seq + len(rows)), rows
