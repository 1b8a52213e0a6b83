"""Parameters, dependencies and documented error responses shared by the controllers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Protocol, TypeVar

import msgspec
from litestar import Request, Response
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter
from litestar.types import Scope

from controlplane_domain.paging import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, MAX_QUERY_LENGTH, Order, Page, PageRequest
from controlplane_domain.ports import Ports
from controlplane_domain.principal import Principal
from controlplane_domain.references import REFERRERS_SHOWN, Dangling
from controlplane_wire.base import ErrorResponse, HTTPValidationError

PrincipalDep = NamedDependency[Principal]
Limit = Annotated[int, Parameter(ge=1, le=MAX_LIMIT, description=f"page size (1 to {MAX_LIMIT})")]
ProjectFilter = Annotated[
    str | None, Parameter(description="only the objects this project holds (none for an unknown project)")
]
Offset = Annotated[
    int, Parameter(ge=0, le=MAX_OFFSET, description="items to skip", schema_extra={"minimum": 0, "maximum": MAX_OFFSET})
]
# A list's direction over (created_at, id): histories default to newest first (`NewestFirst`), every other list
# to oldest first (`OldestFirst`). Optional (None: the list's default) so that the fast lane hands a request that
# gives it to Litestar, as it does every optional filter.
OldestFirst = Annotated[
    Order | None,
    Parameter(
        description="asc: oldest first (the default), desc: newest first; by (created_at, id)",
        schema_extra={"default": Order.ASC.value},
    ),
]
NewestFirst = Annotated[
    Order | None,
    Parameter(
        description="desc: newest first (the default), asc: oldest first; by (created_at, id)",
        schema_extra={"default": Order.DESC.value},
    ),
]
NameFilter = Annotated[
    str | None,
    Parameter(max_length=MAX_QUERY_LENGTH, description="only the one named exactly this (case-sensitive)"),
]
NameQuery = Annotated[
    str | None,
    Parameter(
        max_length=MAX_QUERY_LENGTH,
        description=(
            "only those whose name holds this text: ASCII letters in any case, any other character exactly as "
            "given (% and _ are plain characters)"
        ),
    ),
]
PUBLIC_URL_KEY = "public_url"  # the app state's key of the base of the URLs answers hand out (CONTROLPLANE_PUBLIC_URL)
DEFAULT_PUBLIC_URL = "http://127.0.0.1:8001"  # (the default bind's; the server passes its settings' own)
ADMIN = {"role": "admin"}  # a controller's `opt` when only admins may call it (security.py reads it)
# A route's `opt` when it is part of the worker protocol: worker keys may call it as well (and nothing else).
WORKER_PROTOCOL = {"worker_protocol": True}
# The lease's `opt`: it hands out secret values, so only worker keys and the service key may call it.
WORKERS_ONLY = {"worker_protocol": True, "workers_only": True}

_DESCRIPTIONS = {
    400: "Malformed request (unparseable JSON body)",
    401: "Missing, malformed, unknown, expired or revoked credentials",
    403: "The caller's role does not allow this action",
    404: "Not found in the caller's organization",
    409: "Conflicts with existing data (a duplicate name) or with a concurrent change; on a delete, `IN_USE`: "
    "other objects name it (`details.referrers`: `[{type, id}]`, `details.more`)",
    413: "The request body is too large",
    415: "The body's Content-Type is not JSON (application/json or application/*+json)",
    422: "Validation error",
    429: "Rate limit exceeded (Retry-After says when to come back)",
    500: "Internal error (carries a request id)",
    503: "The database is unavailable",
}


def errors(*codes: int) -> dict[int, ResponseSpec]:
    """Documented error responses: always 400, 401, 403, 422 and 500, plus the given codes; a route that reads a body
    (it documents 415) also documents 413, the body limit's answer."""
    wanted = sorted({400, 401, 403, 422, 500, *codes, *((413,) if 415 in codes else ())})
    return {
        code: ResponseSpec(
            data_container=HTTPValidationError if code == 422 else ErrorResponse,
            description=_DESCRIPTIONS[code],
            generate_examples=False,
        )
        for code in wanted
    }


Force = Annotated[
    bool,
    Parameter(
        description="delete even when other objects name it (a 409 `IN_USE` otherwise); the answer's "
        '`X-Dangling-References` header lists what was left naming nothing (docs/api-decisions.md, "References")'
    ),
]
DANGLING_HEADER = "X-Dangling-References"
DANGLING = [
    ResponseHeader(
        name=DANGLING_HEADER,
        description=f"a forced delete's answer: the objects left naming what was deleted, as `type/id` separated by "
        f"`, ` (at most {REFERRERS_SHOWN}; a last `...` when there were more); absent when none",
        documentation_only=True,
    )
]


def deleted(dangling: Dangling) -> Response[None]:
    """A delete's 204; a forced one that left references dangling says which in `X-Dangling-References`."""
    if not dangling.referrers:
        return Response(None, status_code=204)
    listed = [f"{referrer.type}/{referrer.id}" for referrer in dangling.referrers]
    return Response(None, status_code=204, headers={DANGLING_HEADER: ", ".join([*listed, *(["..."] * dangling.more)])})


L = TypeVar("L")
T = TypeVar("T")
R = TypeVar("R")


def page_of(kind: Callable[..., L], page: Page[T], convert: Callable[[T], Any]) -> L:
    """A list response (`{items, total, limit, offset}`) of the given wire type."""
    return kind(items=[convert(item) for item in page.items], total=page.total, limit=page.limit, offset=page.offset)


class RenderedPages(Protocol):
    """A repository that can hand a page of its rows already rendered as JSON objects (a SQL read model)."""

    rendered_fields: tuple[str, ...]

    async def rendered_page(self, organization_id: str, page: PageRequest) -> tuple[str, int] | None: ...

    async def rendered_get(self, organization_id: str, object_id: str) -> str | None: ...


async def _rendered(
    scope: Scope, ports: Ports, repository: str, item: type[Any], read: Callable[[RenderedPages], Awaitable[R | None]]
) -> R | None:
    """What `read` gets from the unit of work's `repository`, where the app renders rows (`rendered_pages`) and
    the repository's rows are exactly `item` (same fields, same order); None to take the domain path."""
    if not scope["app"].state.get("rendered_pages"):
        return None
    async with ports.read() as uow:
        reader: RenderedPages | None = getattr(uow, repository, None)
        if reader is None or getattr(reader, "rendered_fields", None) != item.__struct_fields__:
            return None
        return await read(reader)


async def rendered_list(
    scope: Scope, ports: Ports, organization_id: str, repository: str, kind: Callable[..., L], item: type[Any],
    page: PageRequest,
) -> L | None:  # fmt: skip
    """A list response whose items the database rendered, where the store can and the wire item is exactly the
    row; None to take the domain path. Building 20 domain and wire objects cost more than the rest of the
    request (docs/benchmarks.md)."""
    found = await _rendered(scope, ports, repository, item, lambda reader: reader.rendered_page(organization_id, page))
    if found is None:
        return None
    items, total = found
    return kind(items=msgspec.Raw(items.encode()), total=total, limit=page.limit, offset=page.offset)


async def rendered_item(
    scope: Scope, ports: Ports, organization_id: str, repository: str, item: type[Any], object_id: str
) -> msgspec.Raw | None:
    """A get's response body as the database rendered the row, where the store can and the wire item is exactly
    the row (as `rendered_list`); None to take the domain path, which also answers what is not found."""
    found = await _rendered(
        scope, ports, repository, item, lambda reader: reader.rendered_get(organization_id, object_id)
    )
    return None if found is None else msgspec.Raw(found.encode())


def page_request(
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
    order: Order | None = None,
    *,
    newest_first: bool = False,
    name: str | None = None,
    q: str | None = None,
) -> PageRequest:
    """The page a list's query asks for; `order` None: the list's default (`newest_first` for a history)."""
    if order is None:
        order = Order.DESC if newest_first else Order.ASC
    return PageRequest(limit=limit, offset=offset, order=order, name=name, q=q)


def caller(scope: Scope) -> tuple[Ports, Principal]:
    """The app's ports and the authenticated caller of a request, read from its scope.

    Handlers take `scope: Scope` and call this instead of declaring `ports` and `principal` dependencies:
    Litestar's dependency injection (a signature model per provider, the handler's kwargs parsed through
    another) cost several times what reading the scope does (docs/benchmarks.md)."""
    principal = scope.get("user")
    assert isinstance(principal, Principal), "authentication middleware did not run"
    ports: Ports = scope["app"].state["ports"]
    return ports, principal


async def provide_principal(request: Request[Any, Any, Any], ports: NamedDependency[Ports]) -> Principal:
    """The authenticated caller (`ports` only orders the dependencies: see app.create_app)."""
    principal = request.scope.get("user")
    assert isinstance(principal, Principal), "authentication middleware did not run"
    return principal
