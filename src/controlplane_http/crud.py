"""An area's standard routes (create, list, get, update, delete), made from a declaration.

An area declares its `Resource` once (the handlers' noun, the operation ids' noun, its wire types, how a domain
object becomes its response) and which of the five routes it has, each with its use case; `routes(...)` puts the
route handlers on the area's `Controller` as if they were written there: the same names (so the same summaries
and the same order in the OpenAPI document), parameters, annotations and documented errors.

The handlers are plain functions given the signature and annotations of the method they stand for
(`signatures.method`), so parsing, validation and the document are the hand-written handler's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any, TypeVar

from litestar import Response, delete, get, patch, post
from litestar.types import Scope

from controlplane_http.handlers import (
    DANGLING,
    Force,
    Limit,
    NameFilter,
    NameQuery,
    NewestFirst,
    Offset,
    OldestFirst,
    caller,
    deleted,
    errors,
    page_of,
    page_request,
)
from controlplane_http.signatures import SCOPE, Query, install, json_body, path_id
from controlplane_wire.base import to_domain, to_wire
from controlplane_wire.configuration import given_fields

C = TypeVar("C", bound=type)
UseCase = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class Resource:
    """What an area's standard routes share: `noun` names the handlers (`create_<noun>`, `list_<noun>s`...) and the
    path parameter (`<noun>_id`, or `id` where given), `operation` the operation ids (`create<Operation>`...)."""

    noun: str
    operation: str
    item: type[Any]  # the response Struct
    page: type[Any]  # the list's Struct (`{items, total, limit, offset}`)
    out: Callable[..., Any] | None = None  # a domain object as `item`; None: msgspec, by field name (`to_wire`)
    plural: tuple[str, str] | None = None  # (nouns, Operations) where not the nouns with an "s"
    scoped: bool = False  # `out` takes the request's scope as well: `out(value, scope)`
    at: str = ""  # the routes' path below the controller's (`/nodes`: `/nodes/`, `/nodes/{node_id}`...)
    id: str | None = None  # the path parameter of one object, where not `<noun>_id`

    def key(self) -> str:
        return self.id or f"{self.noun}_id"

    def plurals(self) -> tuple[str, str]:
        return self.plural or (f"{self.noun}s", f"{self.operation}s")

    def response(self) -> Callable[[Scope], Callable[[Any], Any]]:
        """How a request (by its scope) turns a domain object into `item`."""
        out, item = self.out, self.item
        if out is not None and self.scoped:
            return lambda scope: lambda value: out(value, scope)
        plain = out or (lambda value: to_wire(value, item))
        return lambda scope: plain


def as_command(kind: type[Any]) -> Callable[[Any], Any]:
    """A body as the use case's command, field by field name (nested Structs become the domain's dataclasses)."""
    return lambda data: to_domain(data, kind)


def given_as(kind: type[Any]) -> Callable[[Any], Any]:
    """A body as the use case's command of the fields the client sent (a create's: all; a patch's: those given)."""
    return lambda data: kind(**given_fields(data))


def page_parameters(*, newest_first: bool = False) -> list[Query]:
    """A list's `limit`, `offset` and `order` (a history's: newest first by default)."""
    order = NewestFirst if newest_first else OldestFirst
    return [Query("limit", Limit, 50), Query("offset", Offset, 0), Query("order", order)]


@dataclass(frozen=True)
class _Route:
    use_case: UseCase
    _: KW_ONLY
    codes: tuple[int, ...] = ()  # the error statuses it documents besides every route's (`handlers.errors`)
    doc: str | None = None  # the operation's description (the handler's docstring)
    opt: Mapping[str, Any] | None = None
    principal: bool = False  # the use case takes the caller as `principal=`

    def extra(self, principal: Any) -> dict[str, Any]:
        return {"principal": principal} if self.principal else {}


@dataclass(frozen=True, kw_only=True)
class Create(_Route):
    body: type[Any]
    command: Callable[[Any], Any]
    codes: tuple[int, ...] = (409, 415)

    def add(self, resource: Resource, controller: type) -> None:
        use, command, out, extra = self.use_case, self.command, resource.response(), self.extra

        async def create(self: Any, data: Any, scope: Scope) -> Any:
            ports, principal = caller(scope)
            return out(scope)(await use(ports, principal.organization_id, command(data), **extra(principal)))

        operation = f"create{resource.operation}"
        codes, at = errors(*self.codes), resource.at
        route = post(f"{at}/", operation_id=operation, status_code=201, responses=codes, opt=self.opt)
        parameters = [json_body(self.body), SCOPE]
        install(controller, f"create_{resource.noun}", route, create, parameters, resource.item, self.doc)


@dataclass(frozen=True, kw_only=True)
class Listing(_Route):
    """A list: `GET /`, or with `under` (`job_id`) a list of a parent's, `GET /{job_id}/<nouns>` (`/runs`), whose
    use case takes the parent's id before the page."""

    named: bool = False  # the `name` and `q` filters of named objects
    history: bool = False  # newest first by default
    ordered: bool = True  # an `order` query parameter
    under: str | None = None  # the parent's path parameter
    before: tuple[Query, ...] = ()  # extra query parameters before `limit`
    after: tuple[Query, ...] = ()  # and after the page's
    where: Callable[..., Any] | None = None  # the extra parameters as the use case's one filter (else by name)

    def add(self, resource: Resource, controller: type) -> None:
        out, page, history, fetch = resource.response(), resource.page, self.history, self.fetch()

        async def list_(
            self: Any,
            scope: Scope,
            limit: int,
            offset: int,
            order: Any = None,
            name: Any = None,
            q: Any = None,
            **filters: Any,
        ) -> Any:
            ports, principal = caller(scope)
            request = page_request(limit, offset, order, newest_first=history, name=name, q=q)
            return page_of(page, await fetch(ports, principal.organization_id, request, filters), out(scope))

        nouns, operations = resource.plurals()
        path = f"{resource.at}/" if self.under is None else f"/{{{self.under}:str}}/{nouns.replace('_', '-')}"
        route = get(path, operation_id=f"list{operations}", responses=errors(*self.codes), opt=self.opt)
        parent = [] if self.under is None else [path_id(self.under)]
        paging = page_parameters(newest_first=history)[: 3 if self.ordered else 2]
        names = [Query("name", NameFilter), Query("q", NameQuery)] if self.named else []
        parameters = [*parent, SCOPE, *self.before, *paging, *names, *self.after]
        install(controller, f"list_{nouns}", route, list_, parameters, page, self.doc)

    def fetch(self) -> Callable[[Any, str, Any, dict[str, Any]], Awaitable[Any]]:
        """The use case's call: (ports, organization id, the page, the extra parameters by name)."""
        use, under, where = self.use_case, self.under, self.where
        if under is not None:
            return lambda ports, organization_id, request, filters: use(
                ports, organization_id, filters.pop(under), request, **filters
            )
        if where is not None:
            return lambda ports, organization_id, request, filters: use(
                ports, organization_id, request, where(**filters)
            )
        return lambda ports, organization_id, request, filters: use(ports, organization_id, request, **filters)


@dataclass(frozen=True, kw_only=True)
class Read(_Route):
    codes: tuple[int, ...] = (404,)

    def add(self, resource: Resource, controller: type) -> None:
        use, out, key = self.use_case, resource.response(), resource.key()

        async def read(self: Any, scope: Scope, **path: str) -> Any:
            ports, principal = caller(scope)
            return out(scope)(await use(ports, principal.organization_id, path[key]))

        operation = f"get{resource.operation}"
        route = get(f"{resource.at}/{{{key}:str}}", operation_id=operation, responses=errors(*self.codes), opt=self.opt)
        install(controller, f"get_{resource.noun}", route, read, [path_id(key), SCOPE], resource.item, self.doc)


@dataclass(frozen=True, kw_only=True)
class Update(_Route):
    body: type[Any]
    command: Callable[[Any], Any]
    codes: tuple[int, ...] = (404, 409, 415)

    def add(self, resource: Resource, controller: type) -> None:
        use, command, out, extra = self.use_case, self.command, resource.response(), self.extra
        key = resource.key()

        async def update(self: Any, data: Any, scope: Scope, **path: str) -> Any:
            ports, principal = caller(scope)
            changed = await use(ports, principal.organization_id, path[key], command(data), **extra(principal))
            return out(scope)(changed)

        operation = f"update{resource.operation}"
        path = f"{resource.at}/{{{key}:str}}"
        route = patch(path, operation_id=operation, responses=errors(*self.codes), opt=self.opt)
        parameters = [path_id(key), json_body(self.body), SCOPE]
        install(controller, f"update_{resource.noun}", route, update, parameters, resource.item, self.doc)


@dataclass(frozen=True, kw_only=True)
class Remove(_Route):
    """A delete: 204. With `force` (the default), one that refuses while other objects name it (409 `IN_USE`)
    unless forced, and answers what it left dangling (`handlers.deleted`)."""

    force: bool = True
    codes: tuple[int, ...] = (404, 409)

    def add(self, resource: Resource, controller: type) -> None:
        use, extra, key, forced = self.use_case, self.extra, resource.key(), self.force

        async def remove(self: Any, scope: Scope, force: bool = False, **path: str) -> Any:
            ports, principal = caller(scope)
            if not forced:
                return await use(ports, principal.organization_id, path[key], **extra(principal))
            return deleted(await use(ports, principal.organization_id, path[key], **extra(principal), force=force))

        route = delete(
            f"{resource.at}/{{{key}:str}}",
            operation_id=f"delete{resource.operation}",
            status_code=204,
            responses=errors(*self.codes),
            opt=self.opt,
            response_headers=DANGLING if forced else None,
        )
        parameters = [path_id(key), SCOPE, *([Query("force", Force, False)] if forced else [])]
        returns = Response[None] if forced else None
        install(controller, f"delete_{resource.noun}", route, remove, parameters, returns, self.doc)


Route = Create | Listing | Read | Update | Remove


def routes(resource: Resource, *declared: Route) -> Callable[[C], C]:
    """A class decorator: the declared routes of `resource` as route handlers of the controller."""

    def add(controller: C) -> C:
        for route in declared:
            route.add(resource, controller)
        return controller

    return add
