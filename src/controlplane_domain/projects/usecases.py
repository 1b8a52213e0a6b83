"""Project use cases: create, read, change, delete, and the agents and teams a project holds."""

from __future__ import annotations

from dataclasses import dataclass, field

from controlplane_domain import crud
from controlplane_domain.audit.usecases import record
from controlplane_domain.config import JSONObject
from controlplane_domain.crud import Area
from controlplane_domain.errors import NotFound, ValidationFailed
from controlplane_domain.names import check_name
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.projects.entity import (
    PROJECT_KEY,
    MemberKind,
    Project,
    ProjectCounts,
    ProjectStatus,
    ProjectView,
)
from controlplane_domain.references import Dangling, Kind
from controlplane_domain.retry import retry_transient


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateProject:
    name: str
    key: str
    description: str | None = None
    status: ProjectStatus = ProjectStatus.ACTIVE
    settings: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateProject:
    name: str | Unset = UNSET
    key: str | Unset = UNSET
    description: str | Unset | None = UNSET
    status: ProjectStatus | Unset = UNSET
    settings: JSONObject | Unset = UNSET


def _check_project(project: Project) -> None:
    check_name("name", project.name)
    if PROJECT_KEY.fullmatch(project.key) is None:
        raise ValidationFailed("key", "must be an uppercase letter then 1 to 9 uppercase letters or digits")


PROJECTS = Area("project", lambda uow: uow.projects, Kind.PROJECT, cascades=True)
"""A forced delete takes the project's memberships with it (never its agents nor its teams)."""


async def require_project(uow: UnitOfWork, organization_id: str, project_id: str, *, lock: bool = False) -> Project:
    """The project of this organization, or NotFound."""
    return await crud.require(PROJECTS, uow, organization_id, project_id, lock=lock)


async def _view(uow: UnitOfWork, project: Project) -> ProjectView:
    counts = await uow.projects.counts(project.organization_id, [project.id])
    return ProjectView(project, counts.get(project.id, ProjectCounts()))


@retry_transient
async def create_project(ports: Ports, organization_id: str, command: CreateProject) -> ProjectView:
    project = crud.new(Project, ports, organization_id, command)
    _check_project(project)
    return ProjectView(await crud.add(PROJECTS, ports, project), ProjectCounts())


async def get_project(ports: Ports, organization_id: str, project_id: str) -> ProjectView:
    async with ports.read() as uow:
        return await _view(uow, await require_project(uow, organization_id, project_id))


async def list_projects(ports: Ports, organization_id: str, page: PageRequest) -> Page[ProjectView]:
    async with ports.read() as uow:
        items, total = await uow.projects.list_page(organization_id, page)
        counts = await uow.projects.counts(organization_id, [project.id for project in items])
    views = [ProjectView(project, counts.get(project.id, ProjectCounts())) for project in items]
    return Page(items=views, total=total, limit=page.limit, offset=page.offset)


@retry_transient
async def update_project(ports: Ports, organization_id: str, project_id: str, command: UpdateProject) -> ProjectView:
    async with ports.uow() as uow:
        project = await require_project(uow, organization_id, project_id, lock=True)
        updated = crud.patched(project, command, ports.clock.now())
        _check_project(updated)
        await uow.projects.update(updated)
        view = await _view(uow, updated)
        await uow.commit()
    return view


@retry_transient
async def delete_project(ports: Ports, organization_id: str, project_id: str, *, force: bool = False) -> Dangling:
    """Delete the project. With members: 409 IN_USE; with `force` its memberships go with it (never its agents
    nor its teams), so nothing is left dangling (references.py)."""
    return await crud.delete(PROJECTS, ports, organization_id, project_id, force=force)


async def _require_member(uow: UnitOfWork, organization_id: str, kind: MemberKind, member_id: str) -> None:
    found = (
        await uow.agents.get(organization_id, member_id)
        if kind is MemberKind.AGENT
        else await uow.teams.get(organization_id, member_id)
    )
    if found is None:
        raise NotFound(kind.value, member_id)


@retry_transient
async def set_project_member(
    ports: Ports, organization_id: str, project_id: str, kind: MemberKind, member_id: str, *, member: bool
) -> ProjectView:
    """Add the agent or team to the project (`member`), or remove it; both are idempotent. The project as after."""
    async with ports.uow() as uow:
        project = await require_project(uow, organization_id, project_id, lock=True)
        await _require_member(uow, organization_id, kind, member_id)
        await uow.projects.set_member(organization_id, project_id, kind, member_id, member, ports.clock.now())
        await record(
            uow,
            organization_id=organization_id,
            action=f"project.{'add' if member else 'remove'}_{kind.value}",
            resource_type="project",
            resource_id=project_id,
            details={f"{kind.value}_id": member_id},
        )
        view = await _view(uow, project)
        await uow.commit()
    return view
