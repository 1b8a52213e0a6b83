"""Background workflows: every long-running run of an organization in one shape, whatever area it belongs to: a
workflow run, a job's firing (which runs as the execution or workflow run it started), or a task plan's planning
(the run of a plan is a workflow run of its own).

One status vocabulary for all (docs/api-decisions.md "Background workflows"): `pending`, `running`, `succeeded`,
`failed`, `cancelled`, `skipped`."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from controlplane_domain.executions.entity import Execution, ExecutionStatus
from controlplane_domain.jobs.entity import FiringFilter, JobRun
from controlplane_domain.jobs.entity import RunStatus as FiringStatus
from controlplane_domain.task_plans.entity import PlanStatus, TaskPlan
from controlplane_domain.workflows.entity import RunStatus as WorkflowRunStatus
from controlplane_domain.workflows.entity import WorkflowRun


class BackgroundType(enum.StrEnum):
    WORKFLOW_RUN = "workflow_run"
    JOB_RUN = "job_run"
    TASK_PLAN = "task_plan"


class BackgroundStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"


B = BackgroundStatus
ENDED = frozenset({B.SUCCEEDED, B.FAILED, B.CANCELLED, B.SKIPPED})

FROM_EXECUTION: dict[ExecutionStatus, BackgroundStatus] = {
    ExecutionStatus.PENDING: B.PENDING,
    ExecutionStatus.QUEUED: B.PENDING,
    ExecutionStatus.RUNNING: B.RUNNING,
    ExecutionStatus.WAITING_FOR_INPUT: B.RUNNING,
    ExecutionStatus.COMPLETED: B.SUCCEEDED,
    ExecutionStatus.FAILED: B.FAILED,
    ExecutionStatus.TIMED_OUT: B.FAILED,
    ExecutionStatus.CANCELLED: B.CANCELLED,
}
FROM_WORKFLOW_RUN: dict[WorkflowRunStatus, BackgroundStatus] = {
    WorkflowRunStatus.PENDING: B.PENDING,
    WorkflowRunStatus.RUNNING: B.RUNNING,
    WorkflowRunStatus.SUCCEEDED: B.SUCCEEDED,
    WorkflowRunStatus.FAILED: B.FAILED,
    WorkflowRunStatus.CANCELLED: B.CANCELLED,
}
FROM_PLAN: dict[PlanStatus, BackgroundStatus] = {
    PlanStatus.PLANNING: B.RUNNING,
    PlanStatus.READY: B.SUCCEEDED,
    PlanStatus.STARTED: B.SUCCEEDED,
    PlanStatus.FAILED: B.FAILED,
    PlanStatus.CANCELLED: B.CANCELLED,
}
"""A plan's planning: it succeeded once the plan is ready (or started: its run is a workflow run of its own)."""
FROM_FIRING: dict[FiringStatus, BackgroundStatus] = {FiringStatus.SKIPPED: B.SKIPPED, FiringStatus.FAILED: B.FAILED}
"""A firing that created nothing ended then; a `fired` one has the status of what it created."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BackgroundRun:
    id: str
    type: BackgroundType
    status: BackgroundStatus
    started_at: datetime
    finished_at: datetime | None
    workflow_id: str | None = None
    """The workflow of a workflow run (or of a task plan that ran)."""
    job_id: str | None = None
    execution_id: str | None = None
    workflow_run_id: str | None = None
    """What a job's firing started (one of the two, or neither when it was skipped or failed); a task plan's
    planning execution, and the workflow run of its steps once it ran."""

    @property
    def is_finished(self) -> bool:
        return self.status in ENDED


def of_workflow_run(run: WorkflowRun) -> BackgroundRun:
    return BackgroundRun(
        id=run.id, type=BackgroundType.WORKFLOW_RUN, status=FROM_WORKFLOW_RUN[run.status],
        started_at=run.started_at or run.created_at, finished_at=run.finished_at, workflow_id=run.workflow_id,
    )  # fmt: skip


def of_task_plan(plan: TaskPlan) -> BackgroundRun:
    return BackgroundRun(
        id=plan.id, type=BackgroundType.TASK_PLAN, status=FROM_PLAN[plan.status], started_at=plan.created_at,
        finished_at=plan.finished_at, execution_id=plan.execution_id, workflow_id=plan.workflow_id,
        workflow_run_id=plan.workflow_run_id,
    )  # fmt: skip


def of_job_run(run: JobRun, execution: Execution | None, workflow_run: WorkflowRun | None) -> BackgroundRun:
    """A firing as a background run: skipped or failed (ended when it fired), or what it started (its execution's
    or workflow run's status and end)."""
    status: BackgroundStatus | None = FROM_FIRING.get(run.status)
    finished_at: datetime | None = run.fired_at
    if workflow_run is not None:
        status, finished_at = FROM_WORKFLOW_RUN[workflow_run.status], workflow_run.finished_at
    elif execution is not None:
        status, finished_at = FROM_EXECUTION[execution.status], execution.finished_at
    return BackgroundRun(
        id=run.id, type=BackgroundType.JOB_RUN, status=status or B.FAILED, started_at=run.fired_at,
        finished_at=finished_at, job_id=run.job_id, execution_id=run.execution_id,
        workflow_run_id=run.workflow_run_id,
    )  # fmt: skip


def firing_filter(status: BackgroundStatus) -> FiringFilter:
    """The job runs whose status, in this vocabulary, is `status`."""
    return FiringFilter(
        firing=frozenset(k.value for k, v in FROM_FIRING.items() if v is status),
        executions=frozenset(k.value for k, v in FROM_EXECUTION.items() if v is status),
        workflow_runs=frozenset(k.value for k, v in FROM_WORKFLOW_RUN.items() if v is status),
    )


def workflow_statuses(status: BackgroundStatus) -> frozenset[WorkflowRunStatus]:
    return frozenset(k for k, v in FROM_WORKFLOW_RUN.items() if v is status)


def plan_statuses(status: BackgroundStatus) -> frozenset[PlanStatus]:
    return frozenset(k for k, v in FROM_PLAN.items() if v is status)
