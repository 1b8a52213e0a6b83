"""Task plans: a task given in plain words, planned by a worker (its model answers with a JSON plan of steps, each
an agent's or a team's prompt), checked by the service, then run as a workflow run of those steps."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from controlplane_domain.workflows.entity import StepDefinition

TASK_MAX_LENGTH = 200_000
MAX_AGENT_IDS = 100
SUMMARY_MAX_LENGTH = 10_000
TITLE_MAX_LENGTH = 200


class PlanStatus(enum.StrEnum):
    PLANNING = "planning"
    """Its planning execution is queued or running on the plan's worker queue."""
    READY = "ready"
    FAILED = "failed"
    CANCELLED = "cancelled"
    STARTED = "started"
    """It ran: its workflow run started (`workflow_run_id`), which goes on on its own."""


PLANNING_ENDED = frozenset({PlanStatus.READY, PlanStatus.FAILED, PlanStatus.CANCELLED, PlanStatus.STARTED})


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanStep:
    """One step of a plan: whom to ask (an agent or a team), what, after which steps."""

    id: str
    title: str
    agent_id: str | None = None
    team_id: str | None = None
    prompt: str
    depends_on: tuple[str, ...] = ()

    def definition(self) -> StepDefinition:
        """The step as a workflow's step (its run's queue, one attempt)."""
        return StepDefinition(
            id=self.id, agent_id=self.agent_id, team_id=self.team_id, prompt=self.prompt, depends_on=self.depends_on
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskPlan:
    """A plan and where it stands: `execution_id` is its planning execution; once ready, `summary` and `steps`;
    once run, the workflow made of its steps and that workflow's run."""

    id: str
    organization_id: str
    task: str
    worker_queue_id: str
    agent_ids: tuple[str, ...] | None
    """When given, the only agents its steps may use (and no team)."""
    status: PlanStatus
    execution_id: str
    summary: str | None = None
    steps: tuple[PlanStep, ...] = ()
    error: str | None = None
    workflow_id: str | None = None
    workflow_run_id: str | None = None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
    """When its planning ended (ready, failed or cancelled)."""

    @property
    def is_planning(self) -> bool:
        return self.status is PlanStatus.PLANNING


def plan_topic(plan_id: str) -> str:
    return f"task_plan:{plan_id}"
