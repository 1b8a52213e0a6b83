"""The webhook event a job's firing announces: `job.fired`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from controlplane_domain.jobs.entity import JobRun
from controlplane_domain.webhooks.entity import EventType
from controlplane_domain.webhooks.events import emit

if TYPE_CHECKING:
    from controlplane_domain.ports import Ports, UnitOfWork


async def jobs_fired(ports: Ports, uow: UnitOfWork, runs: Sequence[JobRun]) -> bool:
    """`job.fired` for each run recorded (fired, or skipped or failed: its status says)."""
    wrote = False
    for run in runs:
        data = {"job_id": run.job_id, "run_id": run.id, "trigger": run.trigger.value, "status": run.status.value,
                "execution_id": run.execution_id, "workflow_run_id": run.workflow_run_id,
                "skipped_reason": run.skipped_reason,
                "scheduled_for": run.scheduled_for and run.scheduled_for.isoformat(),
                "fired_at": run.fired_at.isoformat()}  # fmt: skip
        wrote = await emit(ports, uow, run.organization_id, EventType.JOB_FIRED, data, run.fired_at) or wrote
    return wrote
