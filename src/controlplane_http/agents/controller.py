"""Agents: create, list, get, patch, delete."""

from __future__ import annotations

from typing import cast

from litestar import Controller, get
from litestar.params import FromPath
from litestar.types import Scope

from controlplane_domain.agents import usecases
from controlplane_domain.agents.entity import Agent as DomainAgent
from controlplane_domain.config import ExecutionEnvironment
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Remove, Resource, Update, as_command, routes
from controlplane_http.handlers import (
    Limit,
    NameFilter,
    NameQuery,
    Offset,
    OldestFirst,
    ProjectFilter,
    caller,
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


def _update(data: AgentUpdate) -> usecases.UpdateAgent:
    changes = given_fields(data)
    if "execution_environment" in changes and changes["execution_environment"] is not None:
        changes["execution_environment"] = to_domain(changes["execution_environment"], ExecutionEnvironment)
    return usecases.UpdateAgent(**changes)


@routes(
    Resource("agent", "Agent", Agent, AgentList, agent_out),
    Create(usecases.create_agent, body=AgentCreate, command=as_command(usecases.CreateAgent), codes=(400, 409, 415)),
    Update(usecases.update_agent, body=AgentUpdate, command=_update, codes=(400, 404, 409, 415)),
    Remove(usecases.delete_agent),
)
class AgentController(Controller):
    """Get and list are hand-written: they are hot routes (the fast lane, rendered reads)."""

    path = "/api/v1/agents"
    tags = ["agents"]

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


AREA = HttpArea((AgentController,), visible={"agent_id": usecases.get_agent})
