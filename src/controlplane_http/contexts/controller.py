"""Context management: the context of a project, an environment, a team or an agent (PUT, GET, DELETE
`/api/v1/{projects|environments|teams|agents}/{id}/context`), and the context an execution was created with
(`GET /api/v1/executions/{execution_id}/context`)."""

from __future__ import annotations

from typing import Any, TypeVar

from litestar import Controller, delete, get, put
from litestar.params import FromPath
from litestar.types import Scope

from controlplane_domain.contexts import entity, usecases
from controlplane_domain.contexts.entity import OwnerType, ResolvedContext
from controlplane_http.area import HttpArea
from controlplane_http.handlers import caller, errors
from controlplane_http.signatures import SCOPE, install, json_body, path_id
from controlplane_wire.base import to_wire
from controlplane_wire.contexts import Context, ContextPut, ContextSource, ExecutionContext, Knowledge


def _knowledge(items: tuple[entity.Knowledge, ...]) -> list[Knowledge]:
    return [Knowledge(name=item.name, text=item.text, uri=item.uri) for item in items]


def context_out(view: usecases.ContextView) -> Context:
    owner = {"organization_id": view.organization_id, "owner_type": view.owner_type, "owner_id": view.owner_id}
    return to_wire(view.context, Context, **owner, created_at=view.created_at, updated_at=view.updated_at)


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


C = TypeVar("C", bound=type)


def _owned_routes(controller: C) -> C:
    """`GET`, `PUT` and `DELETE /api/v1/{projects|environments|teams|agents}/{id}/context`: for each owner, the
    handlers `get_<owner>`, `put_<owner>` and `delete_<owner>` (operations `get<Owner>Context`...)."""
    for owner in (OwnerType.PROJECT, OwnerType.ENVIRONMENT, OwnerType.TEAM, OwnerType.AGENT):
        _add_owner_routes(controller, owner)
    return controller


def _add_owner_routes(controller: type, owner: OwnerType) -> None:
    noun = owner.value
    key, path, title = f"{noun}_id", f"/{noun}s/{{{noun}_id:str}}/context", noun.title()

    async def read(self: Any, scope: Scope, **ids: str) -> Context:
        ports, principal = caller(scope)
        return context_out(await usecases.get_context(ports, principal.organization_id, owner, ids[key]))

    async def write(self: Any, data: ContextPut, scope: Scope, **ids: str) -> Context:
        ports, principal = caller(scope)
        view = await usecases.put_context(ports, principal.organization_id, owner, ids[key], _domain(data))
        return context_out(view)

    async def remove(self: Any, scope: Scope, **ids: str) -> None:
        ports, principal = caller(scope)
        await usecases.delete_context(ports, principal.organization_id, owner, ids[key])

    given = path_id(key)
    reading = get(path, operation_id=f"get{title}Context", responses=errors(404))
    install(controller, f"get_{noun}", reading, read, [given, SCOPE], Context)
    putting = put(path, operation_id=f"put{title}Context", responses=errors(404, 415))
    install(controller, f"put_{noun}", putting, write, [given, json_body(ContextPut), SCOPE], Context)
    deleting = delete(path, operation_id=f"delete{title}Context", status_code=204, responses=errors(404))
    install(controller, f"delete_{noun}", deleting, remove, [given, SCOPE], None)


@_owned_routes
class ContextController(Controller):
    path = "/api/v1"
    tags = ["context management"]

    @get("/executions/{execution_id:str}/context", operation_id="getExecutionContext", responses=errors(404))
    async def get_execution(self, execution_id: FromPath[str], scope: Scope) -> ExecutionContext:
        ports, principal = caller(scope)
        resolved = await usecases.execution_context(ports, principal.organization_id, execution_id)
        return execution_context_out(execution_id, resolved)


AREA = HttpArea((ContextController,))
