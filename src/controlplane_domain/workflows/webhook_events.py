"""The webhook event a workflow run's change announces: `workflow_run.status_changed`."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from controlplane_domain.webhooks.entity import EventType
from controlplane_domain.webhooks.events import emit
from controlplane_domain.workflows.entity import RunStatus, WorkflowRun

if TYPE_CHECKING:
    from controlplane_domain.ports import Ports, UnitOfWork


async def run_status_changed(
    ports: Ports, uow: UnitOfWork, previous: RunStatus | None, run: WorkflowRun, now: datetime
) -> bool:
    """`workflow_run.status_changed` when the run's status is not `previous` (None: the run is new)."""
    if previous is run.status:
        return False
    data = {"id": run.id, "workflow_id": run.workflow_id, "status": run.status.value,
            "previous_status": None if previous is None else previous.value, "error": run.error,
            "started_at": run.started_at and run.started_at.isoformat(),
            "finished_at": run.finished_at and run.finished_at.isoformat()}  # fmt: skip
    return await emit(ports, uow, run.organization_id, EventType.WORKFLOW_RUN_STATUS_CHANGED, data, now)
