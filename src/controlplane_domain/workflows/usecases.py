"""Workflow definitions: create, read, change, delete, each definition checked (graph.check_steps) with its
targets and queues in the organization."""

from __future__ import annotations

from dataclasses import dataclass

from controlplane_domain import crud
from controlplane_domain.crud import Area
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.names import check_name
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.references import Dangling, Kind
from controlplane_domain.retry import retry_transient
from controlplane_domain.workflows.entity import StepDefinition, Workflow
from controlplane_domain.workflows.graph import check_steps


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateWorkflow:
    name: str
    steps: tuple[StepDefinition, ...]
    description: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateWorkflow:
    name: str | Unset = UNSET
    description: str | Unset | None = UNSET
    steps: tuple[StepDefinition, ...] | Unset = UNSET


WORKFLOWS = Area("workflow", lambda uow: uow.workflows, Kind.WORKFLOW)


async def require_workflow(uow: UnitOfWork, organization_id: str, workflow_id: str, *, lock: bool = False) -> Workflow:
    return await crud.require(WORKFLOWS, uow, organization_id, workflow_id, lock=lock)


async def check_targets(uow: UnitOfWork, organization_id: str, steps: tuple[StepDefinition, ...]) -> None:
    """Every step's agent or team, and its queue when it names one, exists in the organization (422 naming the
    step's field otherwise)."""
    for index, step in enumerate(steps):
        if step.agent_id is not None and await uow.agents.get(organization_id, step.agent_id) is None:
            raise ValidationFailed(f"steps.{index}.agent_id", "no agent of this organization has this id")
        if step.team_id is not None and await uow.teams.get(organization_id, step.team_id) is None:
            raise ValidationFailed(f"steps.{index}.team_id", "no team of this organization has this id")
        if step.worker_queue_id is not None and await uow.queues.get(organization_id, step.worker_queue_id) is None:
            raise ValidationFailed(f"steps.{index}.worker_queue_id", "no worker queue of this organization has this id")


def _check(workflow: Workflow) -> None:
    check_name("name", workflow.name)
    check_steps(workflow.steps)


@retry_transient
async def create_workflow(ports: Ports, organization_id: str, command: CreateWorkflow) -> Workflow:
    workflow = crud.new(Workflow, ports, organization_id, command)
    _check(workflow)

    async def targets_exist(uow: UnitOfWork, workflow: Workflow) -> Workflow:
        await check_targets(uow, organization_id, workflow.steps)
        return workflow

    return await crud.add(WORKFLOWS, ports, workflow, targets_exist)


async def get_workflow(ports: Ports, organization_id: str, workflow_id: str) -> Workflow:
    return await crud.get(WORKFLOWS, ports, organization_id, workflow_id)


async def list_workflows(ports: Ports, organization_id: str, page: PageRequest) -> Page[Workflow]:
    return await crud.list_page(WORKFLOWS, ports, organization_id, page)


@retry_transient
async def update_workflow(ports: Ports, organization_id: str, workflow_id: str, command: UpdateWorkflow) -> Workflow:
    """Change the given fields; runs already started keep the definition they started with."""

    async def check(uow: UnitOfWork, updated: Workflow, stored: Workflow) -> Workflow:
        _check(updated)
        if not isinstance(command.steps, Unset):
            await check_targets(uow, organization_id, updated.steps)
        return updated

    return await crud.patch_in(WORKFLOWS, ports, organization_id, workflow_id, command, check)


@retry_transient
async def delete_workflow(ports: Ports, organization_id: str, workflow_id: str, *, force: bool = False) -> Dangling:
    """Delete the definition; its runs stay (each holds the definition it started with) and go on. Jobs naming it:
    409 IN_USE, or with `force` left naming nothing (references.py)."""
    return await crud.delete(WORKFLOWS, ports, organization_id, workflow_id, force=force)
