"""A planning execution's lease: besides the execution (whose prompt is the task), its worker gets `planning`, the
task to plan with what to answer (the instructions and the plan's JSON Schema) and whom its steps may use."""

from __future__ import annotations

from controlplane_domain.executions.entity import Candidate, Execution, PlanningTask
from controlplane_domain.paging import MAX_LIMIT, PageRequest
from controlplane_domain.ports import UnitOfWork
from controlplane_domain.task_plans.checks import INSTRUCTIONS, PLAN_SCHEMA
from controlplane_domain.teams.entity import Team

CATALOG_LIMIT = MAX_LIMIT
"""The most agents (and teams) a planning lease lists: the plan's `agent_ids`, or the organization's first ones."""


async def planning_task(uow: UnitOfWork, execution: Execution) -> PlanningTask | None:
    """The planning task of a leased planning execution, read in the lease's unit of work (None when its plan is
    gone: the worker then answers as for any execution it cannot run)."""
    organization_id = execution.organization_id
    plan = await uow.task_plans.by_execution(organization_id, execution.id)
    if plan is None:
        return None
    if plan.agent_ids is not None:
        agents = await uow.agents.get_many(organization_id, list(plan.agent_ids))
        teams: list[Team] = []
    else:
        agents, _ = await uow.agents.list_page(organization_id, PageRequest(limit=CATALOG_LIMIT))
        teams, _ = await uow.teams.list_page(organization_id, PageRequest(limit=CATALOG_LIMIT))
    return PlanningTask(
        plan_id=plan.id,
        task=plan.task,
        agents=tuple(
            Candidate(id=a.id, name=a.name, description=a.description, capabilities=tuple(a.capabilities))
            for a in sorted(agents, key=lambda agent: (agent.created_at, agent.id))
        ),
        teams=tuple(Candidate(id=t.id, name=t.name, description=t.description) for t in teams),
        instructions=INSTRUCTIONS,
        plan_schema=PLAN_SCHEMA,
    )
