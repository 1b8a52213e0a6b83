"""An area's standard routes (create, list, get, update, delete), made from a declaration.

An area declares its `Resource` once (the handlers' noun, the operation ids' noun, its wire types, how a domain
object becomes its response) and which of the five routes it has, each with its use case; `routes(...)` puts the
route handlers on the area's `Controller` as if they were written there: the same names (so the same summaries
and the same order in the OpenAPI document), parameters, annotations and documented errors.

Litestar reads a handler's parameters from its signature and their types from its annotations (public Python:
`inspect.signature`, `typing.get_type_hints`). A handler made here is a plain function whose `__signature__` and
`__annotations__` are built as objects, never strings, so parsing, validation and the document are the
hand-written handler's."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, NamedTuple, TypeVar

from litestar import Response, delete, get, patch, post
from litestar.params import FromPath, JSONBody
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
from controlplane_wire.base import to_domain, to_wire
from controlplane_wire.configuration import given_fields

C = TypeVar("C", bound=type)
UseCase = Callable[..., Awaitable[Any]]
_ARGUMENT = inspect.Parameter.POSITIONAL_OR_KEYWORD


@dataclass(frozen=True)
class Resource:
    """What an area's standard routes share: `noun` names the handlers (`create_<noun>`, `list_<noun>s`...) and the
    path parameter (`<noun>_id`), `operation` the operation ids (`create<Operation>`, `list<Operation>s`...)."""

    noun: str
    operation: str
    item: type[Any]  # the response Struct
    page: type[Any]  # the list's Struct (`{items, total, limit, offset}`)
    out: Callable[[Any], Any] | None = None  # a domain object as `item`; None: msgspec, by field name (`to_wire`)

    def response(self) -> Callable[[Any], Any]:
        item = self.item
        return self.out or (lambda value: to_wire(value, item))


def as_command(kind: type[Any]) -> Callable[[Any], Any]:
    """A body as the use case's command, field by field name (nested Structs become the domain's dataclasses)."""
    return lambda data: to_domain(data, kind)


def given_as(kind: type[Any]) -> Callable[[Any], Any]:
    """A partial update's body as the use case's command of the fields the client sent."""
    return lambda data: kind(**given_fields(data))


class Query(NamedTuple):
    """A handler's parameter; a list's extra query parameters are passed to its use case by name."""

    name: str
    annotation: Any
    default: Any = None


def _required(name: str, annotation: Any) -> Query:
    return Query(name, annotation, inspect.Parameter.empty)


_JSON: Any = JSONBody  # a body's annotation, `JSONBody[<its Struct>]`, made of an area's Struct
_PATH = FromPath[str]
_SCOPE = _required("scope", Scope)


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

    def handler(self, resource: Resource, controller: type) -> tuple[str, Any]:
        use, command, out, extra = self.use_case, self.command, resource.response(), self.extra

        async def create(self: Any, data: Any, scope: Scope) -> Any:
            ports, principal = caller(scope)
            return out(await use(ports, principal.organization_id, command(data), **extra(principal)))

        name = f"create_{resource.noun}"
        parameters = [_required("data", _JSON[self.body]), _SCOPE]
        fn = _signed(create, controller, name, parameters, resource.item, self.doc)
        decorator = post(
            "/",
            operation_id=f"create{resource.operation}",
            status_code=201,
            responses=errors(*self.codes),
            opt=self.opt,
        )
        return name, decorator(fn)


@dataclass(frozen=True, kw_only=True)
class Listing(_Route):
    named: bool = False  # the `name` and `q` filters of named objects
    history: bool = False  # newest first by default
    before: tuple[Query, ...] = ()  # extra query parameters before `limit`
    after: tuple[Query, ...] = ()  # and after the page's

    def handler(self, resource: Resource, controller: type) -> tuple[str, Any]:
        use, out, page, history = self.use_case, resource.response(), resource.page, self.history

        async def list_(
            self: Any,
            scope: Scope,
            limit: int,
            offset: int,
            order: Any,
            name: Any = None,
            q: Any = None,
            **filters: Any,
        ) -> Any:
            ports, principal = caller(scope)
            request = page_request(limit, offset, order, newest_first=history, name=name, q=q)
            return page_of(page, await use(ports, principal.organization_id, request, **filters), out)

        name = f"list_{resource.noun}s"
        paging = [
            Query("limit", Limit, 50),
            Query("offset", Offset, 0),
            Query("order", NewestFirst if history else OldestFirst),
        ]
        names = [Query("name", NameFilter), Query("q", NameQuery)] if self.named else []
        parameters = [_SCOPE, *self.before, *paging, *names, *self.after]
        fn = _signed(list_, controller, name, parameters, page, self.doc)
        return name, get("/", operation_id=f"list{resource.operation}s", responses=errors(*self.codes), opt=self.opt)(
            fn
        )


@dataclass(frozen=True, kw_only=True)
class Read(_Route):
    codes: tuple[int, ...] = (404,)

    def handler(self, resource: Resource, controller: type) -> tuple[str, Any]:
        use, out, key = self.use_case, resource.response(), f"{resource.noun}_id"

        async def read(self: Any, scope: Scope, **path: str) -> Any:
            ports, principal = caller(scope)
            return out(await use(ports, principal.organization_id, path[key]))

        name = f"get_{resource.noun}"
        fn = _signed(read, controller, name, [_required(key, _PATH), _SCOPE], resource.item, self.doc)
        decorator = get(
            f"/{{{key}:str}}", operation_id=f"get{resource.operation}", responses=errors(*self.codes), opt=self.opt
        )
        return name, decorator(fn)


@dataclass(frozen=True, kw_only=True)
class Update(_Route):
    body: type[Any]
    command: Callable[[Any], Any]
    codes: tuple[int, ...] = (404, 409, 415)

    def handler(self, resource: Resource, controller: type) -> tuple[str, Any]:
        use, command, out, extra, key = (
            self.use_case,
            self.command,
            resource.response(),
            self.extra,
            resource.noun + "_id",
        )

        async def update(self: Any, data: Any, scope: Scope, **path: str) -> Any:
            ports, principal = caller(scope)
            return out(await use(ports, principal.organization_id, path[key], command(data), **extra(principal)))

        name = f"update_{resource.noun}"
        parameters = [_required(key, _PATH), _required("data", _JSON[self.body]), _SCOPE]
        fn = _signed(update, controller, name, parameters, resource.item, self.doc)
        decorator = patch(
            f"/{{{key}:str}}", operation_id=f"update{resource.operation}", responses=errors(*self.codes), opt=self.opt
        )
        return name, decorator(fn)


@dataclass(frozen=True, kw_only=True)
class Remove(_Route):
    """A delete: 204. With `force` (the default), one that refuses while other objects name it (409 `IN_USE`)
    unless forced, and answers what it left dangling (`handlers.deleted`)."""

    force: bool = True
    codes: tuple[int, ...] = (404, 409)

    def handler(self, resource: Resource, controller: type) -> tuple[str, Any]:
        use, extra, key, forced = self.use_case, self.extra, f"{resource.noun}_id", self.force

        async def remove(self: Any, scope: Scope, force: bool = False, **path: str) -> Any:
            ports, principal = caller(scope)
            if not forced:
                return await use(ports, principal.organization_id, path[key], **extra(principal))
            return deleted(await use(ports, principal.organization_id, path[key], **extra(principal), force=force))

        name = f"delete_{resource.noun}"
        parameters = [_required(key, _PATH), _SCOPE, *([Query("force", Force, False)] if forced else [])]
        returns = Response[None] if forced else None
        fn = _signed(remove, controller, name, parameters, returns, self.doc)
        decorator = delete(
            f"/{{{key}:str}}",
            operation_id=f"delete{resource.operation}",
            status_code=204,
            responses=errors(*self.codes),
            opt=self.opt,
            response_headers=DANGLING if forced else None,
        )
        return name, decorator(fn)


Route = Create | Listing | Read | Update | Remove


def routes(resource: Resource, *declared: Route) -> Callable[[C], C]:
    """A class decorator: the declared routes of `resource` as route handlers of the controller."""

    def add(controller: C) -> C:
        for route in declared:
            name, handler = route.handler(resource, controller)
            setattr(controller, name, handler)
        return controller

    return add


def _signed(
    fn: Callable[..., Any],
    controller: type,
    name: str,
    parameters: Sequence[Query],
    returns: Any,
    doc: str | None,
) -> Callable[..., Any]:
    """`fn` as the method `name` of `controller` with these parameters (name, annotation[, default]) and return
    type: what Litestar (and `help()`) read of a handler."""
    signature = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
    signature += [inspect.Parameter(each.name, _ARGUMENT, default=each.default, annotation=each.annotation)
                  for each in parameters]  # fmt: skip
    fn.__signature__ = inspect.Signature(signature, return_annotation=returns)  # type: ignore[attr-defined]
    fn.__annotations__ = {each.name: each.annotation for each in parameters} | {"return": returns}
    fn.__name__ = name
    fn.__qualname__ = f"{controller.__qualname__}.{name}"
    fn.__module__ = controller.__module__
    fn.__doc__ = doc
    return fn
