"""Projects: create, list, get, patch, delete, and the agents and teams they hold."""

from __future__ import annotations

from litestar import Controller, delete, post
from litestar.params import FromPath
from litestar.types import Scope

from controlplane_domain.projects import usecases
from controlplane_domain.projects.entity import MemberKind, ProjectView
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, as_command, given_as, routes
from controlplane_http.handlers import caller, errors
from controlplane_wire.base import to_wire
from controlplane_wire.projects import Project, ProjectCreate, ProjectList, ProjectUpdate


def project_out(view: ProjectView) -> Project:
    return to_wire(view.project, Project, agent_count=view.counts.agents, team_count=view.counts.teams)


PROJECTS = Resource("project", "Project", Project, ProjectList, project_out)


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
class ProjectController(Controller):
    path = "/api/v1/projects"
    tags = ["projects"]

    @post(
        "/{project_id:str}/agents/{agent_id:str}",
        operation_id="addAgentToProject",
        status_code=200,
        responses=errors(404),
    )
    async def add_agent(self, project_id: FromPath[str], agent_id: FromPath[str], scope: Scope) -> Project:
        return await _membership(scope, project_id, MemberKind.AGENT, agent_id, True)

    @delete(
        "/{project_id:str}/agents/{agent_id:str}",
        operation_id="removeAgentFromProject",
        status_code=200,
        responses=errors(404),
    )
    async def remove_agent(self, project_id: FromPath[str], agent_id: FromPath[str], scope: Scope) -> Project:
        return await _membership(scope, project_id, MemberKind.AGENT, agent_id, False)

    @post(
        "/{project_id:str}/teams/{team_id:str}", operation_id="addTeamToProject", status_code=200, responses=errors(404)
    )
    async def add_team(self, project_id: FromPath[str], team_id: FromPath[str], scope: Scope) -> Project:
        return await _membership(scope, project_id, MemberKind.TEAM, team_id, True)

    @delete(
        "/{project_id:str}/teams/{team_id:str}",
        operation_id="removeTeamFromProject",
        status_code=200,
        responses=errors(404),
    )
    async def remove_team(self, project_id: FromPath[str], team_id: FromPath[str], scope: Scope) -> Project:
        return await _membership(scope, project_id, MemberKind.TEAM, team_id, False)
