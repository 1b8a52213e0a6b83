"""Context management: the context of a project, an environment, a team or an agent (PUT, GET, DELETE
`/api/v1/{projects|environments|teams|agents}/{id}/context`), and the context an execution was created with
(`GET /api/v1/executions/{execution_id}/context`)."""

from __future__ import annotations

from litestar import Controller, delete, get, put
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.contexts import entity, usecases
from controlplane_domain.contexts.entity import OwnerType, ResolvedContext
from controlplane_http.handlers import caller, errors
from controlplane_wire.contexts import Context, ContextPut, ContextSource, ExecutionContext, Knowledge


def _knowledge(items: tuple[entity.Knowledge, ...]) -> list[Knowledge]:
    return [Knowledge(name=item.name, text=item.text, uri=item.uri) for item in items]


def context_out(view: usecases.ContextView) -> Context:
    context = view.context
    return Context(
        organization_id=view.organization_id,
        owner_type=view.owner_type,
        owner_id=view.owner_id,
        instructions=context.instructions,
        knowledge=_knowledge(context.knowledge),
        variables=dict(context.variables),
        storage_paths=list(context.storage_paths),
        created_at=view.created_at,
        updated_at=view.updated_at,
    )


def execution_context_out(execution_id: str, resolved: ResolvedContext) -> ExecutionContext:
    context = resolved.context
    return ExecutionContext(
        execution_id=execution_id,
        instructions=context.instructions,
        knowledge=_knowledge(context.knowledge),
        variables=dict(context.variables),
        storage_paths=list(context.storage_paths),
        sources=[ContextSource(owner_type=s.owner_type, owner_id=s.owner_id) for s in resolved.sources],
    )


def _domain(data: ContextPut) -> entity.Context:
    return entity.Context(
        instructions=data.instructions,
        knowledge=tuple(entity.Knowledge(item.name, item.text, item.uri) for item in data.knowledge),
        variables=dict(data.variables),
        storage_paths=tuple(data.storage_paths),
    )


async def _get(scope: Scope, owner_type: OwnerType, owner_id: str) -> Context:
    ports, principal = caller(scope)
    return context_out(await usecases.get_context(ports, principal.organization_id, owner_type, owner_id))


async def _put(scope: Scope, owner_type: OwnerType, owner_id: str, data: ContextPut) -> Context:
    ports, principal = caller(scope)
    view = await usecases.put_context(ports, principal.organization_id, owner_type, owner_id, _domain(data))
    return context_out(view)


async def _delete(scope: Scope, owner_type: OwnerType, owner_id: str) -> None:
    ports, principal = caller(scope)
    await usecases.delete_context(ports, principal.organization_id, owner_type, owner_id)


READ, WRITE, GONE = errors(404), errors(404, 415), errors(404)
P, E, T, A = OwnerType.PROJECT, OwnerType.ENVIRONMENT, OwnerType.TEAM, OwnerType.AGENT


class ContextController(Controller):
    path = "/api/v1"
    tags = ["context management"]

    @get("/projects/{project_id:str}/context", operation_id="getProjectContext", responses=READ)
    async def get_project(self, project_id: FromPath[str], scope: Scope) -> Context:
        return await _get(scope, P, project_id)

    @put("/projects/{project_id:str}/context", operation_id="putProjectContext", responses=WRITE)
    async def put_project(self, project_id: FromPath[str], data: JSONBody[ContextPut], scope: Scope) -> Context:
        return await _put(scope, P, project_id, data)

    @delete("/projects/{project_id:str}/context", operation_id="deleteProjectContext", status_code=204,
            responses=GONE)  # fmt: skip
    async def delete_project(self, project_id: FromPath[str], scope: Scope) -> None:
        await _delete(scope, P, project_id)

    @get("/environments/{environment_id:str}/context", operation_id="getEnvironmentContext", responses=READ)
    async def get_environment(self, environment_id: FromPath[str], scope: Scope) -> Context:
        return await _get(scope, E, environment_id)

    @put("/environments/{environment_id:str}/context", operation_id="putEnvironmentContext", responses=WRITE)
    async def put_environment(self, environment_id: FromPath[str], data: JSONBody[ContextPut], scope: Scope) -> Context:
        return await _put(scope, E, environment_id, data)

    @delete("/environments/{environment_id:str}/context", operation_id="deleteEnvironmentContext", status_code=204,
            responses=GONE)  # fmt: skip
    async def delete_environment(self, environment_id: FromPath[str], scope: Scope) -> None:
        await _delete(scope, E, environment_id)

    @get("/teams/{team_id:str}/context", operation_id="getTeamContext", responses=READ)
    async def get_team(self, team_id: FromPath[str], scope: Scope) -> Context:
        return await _get(scope, T, team_id)

    @put("/teams/{team_id:str}/context", operation_id="putTeamContext", responses=WRITE)
    async def put_team(self, team_id: FromPath[str], data: JSONBody[ContextPut], scope: Scope) -> Context:
        return await _put(scope, T, team_id, data)

    @delete("/teams/{team_id:str}/context", operation_id="deleteTeamContext", status_code=204, responses=GONE)
    async def delete_team(self, team_id: FromPath[str], scope: Scope) -> None:
        await _delete(scope, T, team_id)

    @get("/agents/{agent_id:str}/context", operation_id="getAgentContext", responses=READ)
    async def get_agent(self, agent_id: FromPath[str], scope: Scope) -> Context:
        return await _get(scope, A, agent_id)

    @put("/agents/{agent_id:str}/context", operation_id="putAgentContext", responses=WRITE)
    async def put_agent(self, agent_id: FromPath[str], data: JSONBody[ContextPut], scope: Scope) -> Context:
        return await _put(scope, A, agent_id, data)

    @delete("/agents/{agent_id:str}/context", operation_id="deleteAgentContext", status_code=204, responses=GONE)
    async def delete_agent(self, agent_id: FromPath[str], scope: Scope) -> None:
        await _delete(scope, A, agent_id)

    @get("/executions/{execution_id:str}/context", operation_id="getExecutionContext", responses=READ)
    async def get_execution(self, execution_id: FromPath[str], scope: Scope) -> ExecutionContext:
        ports, principal = caller(scope)
        resolved = await usecases.execution_context(ports, principal.organization_id, execution_id)
        return execution_context_out(execution_id, resolved)
