"""Task planning [task planning]: a plan made by a worker (create, read, list) and its run as a workflow run."""

from __future__ import annotations

from litestar import Controller, get, post
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.types import Scope

from controlplane_domain.task_plans import usecases
from controlplane_domain.task_plans.entity import PlanStatus
from controlplane_domain.task_plans.entity import TaskPlan as DomainPlan
from controlplane_http.handlers import Limit, NewestFirst, Offset, caller, errors, page_of, page_request
from controlplane_http.workflows.controller import run_out
from controlplane_wire.task_plans import PlanStep, TaskPlan, TaskPlanCreate, TaskPlanList
from controlplane_wire.workflows import WorkflowRun


def plan_out(plan: DomainPlan) -> TaskPlan:
    return TaskPlan(
        id=plan.id,
        organization_id=plan.organization_id,
        task=plan.task,
        worker_queue_id=plan.worker_queue_id,
        agent_ids=None if plan.agent_ids is None else list(plan.agent_ids),
        status=plan.status,
        summary=plan.summary,
        steps=[
            PlanStep(
                id=s.id,
                title=s.title,
                agent_id=s.agent_id,
                team_id=s.team_id,
                prompt=s.prompt,
                depends_on=list(s.depends_on),
            )
            for s in plan.steps
        ],
        error=plan.error,
        execution_id=plan.execution_id,
        workflow_id=plan.workflow_id,
        workflow_run_id=plan.workflow_run_id,
        created_at=plan.created_at,
        updated_at=plan.updated_at,
        finished_at=plan.finished_at,
    )


class TaskPlanController(Controller):
    path = "/api/v1/task-plans"
    tags = ["task planning"]

    @post("/", operation_id="createTaskPlan", status_code=201, responses=errors(415))
    async def create_plan(self, data: JSONBody[TaskPlanCreate], scope: Scope) -> TaskPlan:
        """A plan, `planning`: its planning execution is queued on the worker queue; a worker answers with a JSON
        plan, which the service checks (ready, or failed saying why). 422 when the queue or an agent of
        `agent_ids` is not the organization's."""
        ports, principal = caller(scope)
        agent_ids = None if data.agent_ids is None else tuple(data.agent_ids)
        command = usecases.CreatePlan(task=data.task, worker_queue_id=data.worker_queue_id, agent_ids=agent_ids)
        return plan_out(await usecases.create_plan(ports, principal.organization_id, command))

    @get("/", operation_id="listTaskPlans", responses=errors())
    async def list_plans(
        self,
        scope: Scope,
        status: FromQuery[PlanStatus | None] = None,
        limit: Limit = 50,
        offset: Offset = 0,
        order: NewestFirst = None,
    ) -> TaskPlanList:
        ports, principal = caller(scope)
        page = await usecases.list_plans(
            ports, principal.organization_id, page_request(limit, offset, order, newest_first=True), status
        )
        return page_of(TaskPlanList, page, plan_out)

    @get("/{plan_id:str}", operation_id="getTaskPlan", responses=errors(404))
    async def get_plan(self, plan_id: FromPath[str], scope: Scope) -> TaskPlan:
        ports, principal = caller(scope)
        return plan_out(await usecases.get_plan(ports, principal.organization_id, plan_id))

    @post("/{plan_id:str}/run", operation_id="runTaskPlan", status_code=201, responses=errors(404, 409))
    async def run_plan(self, plan_id: FromPath[str], scope: Scope) -> WorkflowRun:
        """A workflow run of the plan's steps on its worker queue (input `{"task": ...}`); the plan is then
        `started`. 409 when the plan is not `ready`, or its queue, an agent or a team of its steps is gone."""
        ports, principal = caller(scope)
        return run_out(await usecases.run_plan(ports, principal.organization_id, plan_id))
