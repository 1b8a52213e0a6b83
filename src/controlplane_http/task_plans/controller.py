"""Task planning [task planning]: a plan made by a worker (create, read, list) and its run as a workflow run."""

from __future__ import annotations

from litestar import Controller, post
from litestar.params import FromPath, FromQuery
from litestar.types import Scope

from controlplane_domain.task_plans import usecases
from controlplane_domain.task_plans.entity import PlanStatus
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Listing, Read, Resource, routes
from controlplane_http.handlers import caller, errors
from controlplane_http.signatures import Query
from controlplane_http.workflows.controller import run_out
from controlplane_wire.task_plans import TaskPlan, TaskPlanCreate, TaskPlanList
from controlplane_wire.workflows import WorkflowRun

StatusFilter = FromQuery[PlanStatus | None]


def _create(data: TaskPlanCreate) -> usecases.CreatePlan:
    agent_ids = None if data.agent_ids is None else tuple(data.agent_ids)
    return usecases.CreatePlan(task=data.task, worker_queue_id=data.worker_queue_id, agent_ids=agent_ids)


@routes(
    Resource("plan", "TaskPlan", TaskPlan, TaskPlanList),
    Create(
        usecases.create_plan,
        body=TaskPlanCreate,
        command=_create,
        codes=(415,),
        doc="""A plan, `planning`: its planning execution is queued on the worker queue; a worker answers with a JSON
        plan, which the service checks (ready, or failed saying why). 422 when the queue or an agent of
        `agent_ids` is not the organization's.""",
    ),
    Listing(usecases.list_plans, history=True, before=(Query("status", StatusFilter),)),
    Read(usecases.get_plan),
)
class TaskPlanController(Controller):
    path = "/api/v1/task-plans"
    tags = ["task planning"]

    @post("/{plan_id:str}/run", operation_id="runTaskPlan", status_code=201, responses=errors(404, 409))
    async def run_plan(self, plan_id: FromPath[str], scope: Scope) -> WorkflowRun:
        """A workflow run of the plan's steps on its worker queue (input `{"task": ...}`); the plan is then
        `started`. 409 when the plan is not `ready`, or its queue, an agent or a team of its steps is gone."""
        ports, principal = caller(scope)
        return run_out(await usecases.run_plan(ports, principal.organization_id, plan_id))


AREA = HttpArea((TaskPlanController,), visible={"plan_id": usecases.get_plan})
