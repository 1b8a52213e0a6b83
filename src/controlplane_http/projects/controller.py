"""Projects: create, list, get, patch, delete, and the agents and teams they hold."""

from __future__ import annotations

from typing import Any, TypeVar

from litestar import Controller, delete, post
from litestar.types import Scope

from controlplane_domain.projects import usecases
from controlplane_domain.projects.entity import MemberKind, ProjectView
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, as_command, given_as, routes
from controlplane_http.handlers import caller, errors
from controlplane_http.signatures import SCOPE, install, path_id
from controlplane_wire.base import to_wire
from controlplane_wire.projects import Project, ProjectCreate, ProjectList, ProjectUpdate


def project_out(view: ProjectView) -> Project:
    return to_wire(view.project, Project, agent_count=view.counts.agents, team_count=view.counts.teams)


C = TypeVar("C", bound=type)
PROJECTS = Resource("project", "Project", Project, ProjectList, project_out)


def _membership_routes(controller: C) -> C:
    """`POST` and `DELETE /api/v1/projects/{project_id}/{agents|teams}/{id}`, both answering the project: handlers
    `add_<kind>` and `remove_<kind>` (operations `add<Kind>ToProject`, `remove<Kind>FromProject`)."""
    for kind in MemberKind:
        _add_member_routes(controller, kind)
    return controller


def _add_member_routes(controller: type, kind: MemberKind) -> None:
    key, title = f"{kind.value}_id", kind.value.title()
    path = f"/{{project_id:str}}/{kind.value}s/{{{key}:str}}"

    async def add(self: Any, project_id: str, scope: Scope, **ids: str) -> Project:
        return await _membership(scope, project_id, kind, ids[key], True)

    async def remove(self: Any, project_id: str, scope: Scope, **ids: str) -> Project:
        return await _membership(scope, project_id, kind, ids[key], False)

    parameters = [path_id("project_id"), path_id(key), SCOPE]
    adding = post(path, operation_id=f"add{title}ToProject", status_code=200, responses=errors(404))
    install(controller, f"add_{kind.value}", adding, add, parameters, Project)
    removing = delete(path, operation_id=f"remove{title}FromProject", status_code=200, responses=errors(404))
    install(controller, f"remove_{kind.value}", removing, remove, parameters, Project)


async def _membership(scope: Scope, project_id: str, kind: MemberKind, member_id: str, member: bool) -> Project:
    ports, principal = caller(scope)
    view = await usecases.set_project_member(
        ports, principal.organization_id, project_id, kind, member_id, member=member
    )
    return project_out(view)


@routes(
    PROJECTS,
    Create(usecases.create_project, body=ProjectCreate, command=as_command(usecases.CreateProject)),
    Listing(usecases.list_projects, named=True),
    Read(usecases.get_project),
    Update(usecases.update_project, body=ProjectUpdate, command=given_as(usecases.UpdateProject)),
    Remove(usecases.delete_project),
)
@_membership_routes
class ProjectController(Controller):
    path = "/api/v1/projects"
    tags = ["projects"]


AREA = HttpArea((ProjectController,), visible={"project_id": usecases.get_project})
