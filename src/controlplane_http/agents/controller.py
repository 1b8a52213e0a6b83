"""Agents: create, list, get, patch, delete."""

from __future__ import annotations

from typing import cast

from litestar import Controller, Response, delete, get, patch, post
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.agents import usecases
from controlplane_domain.agents.entity import Agent as DomainAgent
from controlplane_domain.config import ExecutionEnvironment
from controlplane_http.handlers import (
    DANGLING,
    Force,
    Limit,
    NameFilter,
    NameQuery,
    Offset,
    OldestFirst,
    ProjectFilter,
    caller,
    deleted,
    errors,
    page_of,
    page_request,
    rendered_item,
    rendered_list,
)
from controlplane_wire.agents import Agent, AgentCreate, AgentList, AgentUpdate
from controlplane_wire.base import to_domain, to_wire
from controlplane_wire.configuration import given_fields


def agent_out(agent: DomainAgent) -> Agent:
    return to_wire(agent, Agent)


class AgentController(Controller):
    path = "/api/v1/agents"
    tags = ["agents"]

    @post("/", operation_id="createAgent", status_code=201, responses=errors(400, 409, 415))
    async def create_agent(self, data: JSONBody[AgentCreate], scope: Scope) -> Agent:
        ports, principal = caller(scope)
        command = to_domain(data, usecases.CreateAgent)
        return agent_out(await usecases.create_agent(ports, principal.organization_id, command))

    @get("/", operation_id="listAgents", responses=errors())
    async def list_agents(
        self,
        scope: Scope,
        limit: Limit = 50,
        offset: Offset = 0,
        order: OldestFirst = None,
        name: NameFilter = None,
        q: NameQuery = None,
        project_id: ProjectFilter = None,
    ) -> AgentList:
        ports, principal = caller(scope)
        request = page_request(limit, offset, order, name=name, q=q)
        if project_id is None:
            rendered = await rendered_list(scope, ports, principal.organization_id, "agents", AgentList, Agent, request)
            if rendered is not None:  # the same page, rendered by the database (a read model: see rendered_list)
                return rendered
        page = await usecases.list_agents(ports, principal.organization_id, request, project_id=project_id)
        return page_of(AgentList, page, agent_out)

    @get("/{agent_id:str}", operation_id="getAgent", responses=errors(404))
    async def get_agent(self, agent_id: FromPath[str], scope: Scope) -> Agent:
        ports, principal = caller(scope)
        rendered = await rendered_item(scope, ports, principal.organization_id, "agents", Agent, agent_id)
        if rendered is not None:  # the same object, rendered by the database (a read model: see rendered_item)
            return cast(Agent, rendered)
        return agent_out(await usecases.get_agent(ports, principal.organization_id, agent_id))

    @patch("/{agent_id:str}", operation_id="updateAgent", responses=errors(400, 404, 409, 415))
    async def update_agent(self, agent_id: FromPath[str], data: JSONBody[AgentUpdate], scope: Scope) -> Agent:
        ports, principal = caller(scope)
        changes = given_fields(data)
        if "execution_environment" in changes and changes["execution_environment"] is not None:
            changes["execution_environment"] = to_domain(changes["execution_environment"], ExecutionEnvironment)
        command = usecases.UpdateAgent(**changes)
        return agent_out(await usecases.update_agent(ports, principal.organization_id, agent_id, command))

    @delete(
        "/{agent_id:str}",
        operation_id="deleteAgent",
        status_code=204,
        responses=errors(404, 409),
        response_headers=DANGLING,
    )
    async def delete_agent(self, agent_id: FromPath[str], scope: Scope, force: Force = False) -> Response[None]:
        ports, principal = caller(scope)
        return deleted(await usecases.delete_agent(ports, principal.organization_id, agent_id, force=force))
