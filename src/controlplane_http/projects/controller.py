"""Projects: create, list, get, patch, delete, and the agents and teams they hold."""

from __future__ import annotations

from litestar import Controller, Response, delete, get, patch, post
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.projects import usecases
from controlplane_domain.projects.entity import MemberKind, ProjectView
from controlplane_http.handlers import (
    DANGLING,
    Force,
    Limit,
    NameFilter,
    NameQuery,
    Offset,
    OldestFirst,
    caller,
    deleted,
    errors,
    page_of,
    page_request,
)
from controlplane_wire.base import to_domain
from controlplane_wire.configuration import given_fields
from controlplane_wire.projects import Project, ProjectCreate, ProjectList, ProjectUpdate


def project_out(view: ProjectView) -> Project:
    project = view.project
    return Project(
        id=project.id,
        organization_id=project.organization_id,
        name=project.name,
        key=project.key,
        description=project.description,
        status=project.status,
        settings=project.settings,
        agent_count=view.counts.agents,
        team_count=view.counts.teams,
        created_at=project.created_at,
        updated_at=project.updated_at,
    )


async def _membership(scope: Scope, project_id: str, kind: MemberKind, member_id: str, member: bool) -> Project:
    ports, principal = caller(scope)
    view = await usecases.set_project_member(
        ports, principal.organization_id, project_id, kind, member_id, member=member
    )
    return project_out(view)


class ProjectController(Controller):
    path = "/api/v1/projects"
    tags = ["projects"]

    @post("/", operation_id="createProject", status_code=201, responses=errors(409, 415))
    async def create_project(self, data: JSONBody[ProjectCreate], scope: Scope) -> Project:
        ports, principal = caller(scope)
        command = to_domain(data, usecases.CreateProject)
        return project_out(await usecases.create_project(ports, principal.organization_id, command))

    @get("/", operation_id="listProjects", responses=errors())
    async def list_projects(
        self,
        scope: Scope,
        limit: Limit = 50,
        offset: Offset = 0,
        order: OldestFirst = None,
        name: NameFilter = None,
        q: NameQuery = None,
    ) -> ProjectList:
        ports, principal = caller(scope)
        page = await usecases.list_projects(
            ports, principal.organization_id, page_request(limit, offset, order, name=name, q=q)
        )
        return page_of(ProjectList, page, project_out)

    @get("/{project_id:str}", operation_id="getProject", responses=errors(404))
    async def get_project(self, project_id: FromPath[str], scope: Scope) -> Project:
        ports, principal = caller(scope)
        return project_out(await usecases.get_project(ports, principal.organization_id, project_id))

    @patch("/{project_id:str}", operation_id="updateProject", responses=errors(404, 409, 415))
    async def update_project(self, project_id: FromPath[str], data: JSONBody[ProjectUpdate], scope: Scope) -> Project:
        ports, principal = caller(scope)
        command = usecases.UpdateProject(**given_fields(data))
        return project_out(await usecases.update_project(ports, principal.organization_id, project_id, command))

    @delete(
        "/{project_id:str}",
        operation_id="deleteProject",
        status_code=204,
        responses=errors(404, 409),
        response_headers=DANGLING,
    )
    async def delete_project(self, project_id: FromPath[str], scope: Scope, force: Force = False) -> Response[None]:
        ports, principal = caller(scope)
        return deleted(await usecases.delete_project(ports, principal.organization_id, project_id, force=force))

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
