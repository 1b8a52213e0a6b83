"""Background workflows [temporal-workflows]: every long-running run of the organization (workflow runs, job
firings, task plans' planning) in one shape, newest first; read one; cancel one."""

from __future__ import annotations

from datetime import datetime

import msgspec
from litestar import Controller, post
from litestar.params import FromPath
from litestar.types import Scope

from controlplane_domain.background import usecases
from controlplane_domain.background.entity import BackgroundRun, BackgroundStatus, BackgroundType
from controlplane_http.area import HttpArea
from controlplane_http.crud import Listing, Read, Resource, routes
from controlplane_http.handlers import caller, errors
from controlplane_http.signatures import optional
from controlplane_wire.base import to_wire

API = "/api/v1"


class TemporalWorkflow(msgspec.Struct, kw_only=True):
    id: str
    type: BackgroundType
    status: BackgroundStatus
    started_at: datetime
    finished_at: datetime | None
    links: dict[str, str]
    """Paths (relative to the server) of this run and of what it belongs to or started."""


class TemporalWorkflowList(msgspec.Struct, kw_only=True):
    items: list[TemporalWorkflow]
    total: int
    limit: int
    offset: int


def links(run: BackgroundRun) -> dict[str, str]:
    found = {"self": f"{API}/temporal-workflows/{run.id}"}
    if run.type is BackgroundType.WORKFLOW_RUN:
        found["workflow_run"] = f"{API}/workflow-runs/{run.id}"
        found["workflow"] = f"{API}/workflows/{run.workflow_id}"
        return found
    if run.type is BackgroundType.TASK_PLAN:
        found["task_plan"] = f"{API}/task-plans/{run.id}"
        if run.workflow_id is not None:
            found["workflow"] = f"{API}/workflows/{run.workflow_id}"
    else:
        found["job"] = f"{API}/jobs/{run.job_id}"
        found["job_runs"] = f"{API}/jobs/{run.job_id}/runs"
    if run.workflow_run_id is not None:
        found["workflow_run"] = f"{API}/workflow-runs/{run.workflow_run_id}"
    if run.execution_id is not None:
        found["execution"] = f"{API}/executions/{run.execution_id}"
    return found


def temporal_out(run: BackgroundRun) -> TemporalWorkflow:
    return to_wire(run, TemporalWorkflow, links=links(run))


@routes(
    Resource("run", "TemporalWorkflow", TemporalWorkflow, TemporalWorkflowList, temporal_out,
             plural=("runs", "TemporalWorkflows"), id="temporal_workflow_id"),
    Listing(
        usecases.list_background_runs,
        ordered=False,
        before=optional(type=BackgroundType, status=BackgroundStatus),
        where=usecases.BackgroundFilter,
        doc="Workflow runs, job firings and task plans, newest first (`started_at`, then id, descending); `status` "
        "in one\nvocabulary: pending, running, succeeded, failed, cancelled, skipped.",
    ),
    Read(usecases.get_background_run),
)  # fmt: skip
class TemporalWorkflowController(Controller):
    path = "/api/v1/temporal-workflows"
    tags = ["temporal-workflows"]

    @post(
        "/{temporal_workflow_id:str}/cancel",
        operation_id="cancelTemporalWorkflow",
        status_code=200,
        responses=errors(404, 409),
    )
    async def cancel_run(self, temporal_workflow_id: FromPath[str], scope: Scope) -> TemporalWorkflow:
        """A workflow run is cancelled; a job firing's execution or workflow run is cancelled (a running
        execution's worker is asked to stop); a task plan still planning is cancelled with its planning
        execution. 409 when it already finished."""
        ports, principal = caller(scope)
        run = await usecases.cancel_background_run(ports, principal.organization_id, temporal_workflow_id)
        return temporal_out(run)


AREA = HttpArea((TemporalWorkflowController,), visible={"temporal_workflow_id": usecases.get_background_run})
