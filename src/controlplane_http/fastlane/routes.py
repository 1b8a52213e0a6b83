"""The fast lane's routes: which operations it serves, and each one described at start (what to match, what its
handler takes, what to answer), or refused when the lane could not serve it exactly as Litestar would."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.types import Empty

from controlplane_domain.principal import ROLE_RANK, Role
from controlplane_http.body import StrictJSONBody
from controlplane_http.security import READ_METHODS, WORKER_PROTOCOL, WORKERS_ONLY, is_caseless

# The routes the lane serves, by operation id: the reads and the heartbeat, then the execution round trip.
HOT_OPERATIONS = (
    "getAgent", "listAgents", "workerHeartbeat",
    "executeAgent", "leaseExecution", "appendExecutionEvents", "completeExecution",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Bound:
    """An integer query parameter and the bounds its declaration gives it."""

    name: str
    ge: int | None
    le: int | None


@dataclass(frozen=True, slots=True)
class Lane:
    """One route of the lane: what to match, what the handler takes, what to answer."""

    method: str
    prefix: str  # the path up to its parameter, or the whole path
    suffix: str  # the path after its parameter ("" when the parameter ends it)
    parameter: str | None  # the name of the path's one `str` parameter
    caseless: bool  # the parameter is a server-made id, read in lowercase (security.is_caseless)
    call: Callable[..., Awaitable[Any]]
    roles: frozenset[Role]  # the roles that may call it (security.refusal's rule, at start)
    workers_only: bool  # the lease: the service key (`Principal.may_lease`) may call it too
    status: int
    query: dict[str, Bound]
    body: Any  # the JSON body's type, or None
    handler: Any  # Litestar's route handler: it turns a `Response` the handler returns into what is sent
    request: bool  # the handler takes the `request` (to watch for the client hanging up)
    template: str  # the route's path template, as Litestar puts it in the scope (the metrics' route label)


def describe(route: HTTPRoute, method: str, handler: Any) -> Lane:
    """Describe one route for the lane, or refuse (at start) a handler the lane cannot call exactly."""
    name = handler.operation_id
    layers = handler.ownership_layers
    plain = (
        not handler.resolve_guards()
        and not set(handler.parsed_fn_signature.parameters) & set(handler.resolve_dependencies())
        and handler.resolve_before_request() is None
        and handler.resolve_after_response() is None
        and not any(getattr(layer, "after_request", None) for layer in layers)
        and not handler.resolve_response_headers()
        and not handler.resolve_response_cookies()
        and not handler.cache
        and handler.background is None
        and handler.resolve_return_dto() is None
        and not handler.has_sync_callable
        and handler.parsed_fn_signature.return_type.annotation not in (None, type(None))
        and 200 <= handler.status_code < 300
        and handler.status_code != 204
        and len(route.path_parameters) <= 1
        and all(parameter.type is str for parameter in route.path_parameters.values())
    )
    if not plain:
        raise ValueError(f"{name}: the fast lane serves plain JSON handlers only")
    parameter = next(iter(route.path_parameters), None)
    prefix, suffix = route.path, ""
    if parameter is not None:
        prefix, _, suffix = route.path_format.partition("{" + parameter + "}")
        if not prefix.endswith("/") or (suffix and not suffix.startswith("/")) or suffix.endswith("/"):
            raise ValueError(f"{name}: the fast lane takes a path parameter only as a whole segment")
    query: dict[str, Bound] = {}
    body = None
    for argument, field in handler.parsed_fn_signature.parameters.items():
        if argument in ("scope", "request", parameter):
            continue
        if argument == "data":
            body = StrictJSONBody.body_type(handler)
            continue
        definition = field.kwarg_definition
        if field.default is None:  # an optional filter: a request that gives it is not plain (Litestar serves it)
            continue
        if field.annotation is not int or field.default is Empty or definition is None:
            raise ValueError(f"{name}: the fast lane cannot pass the parameter {argument!r}")
        query[argument] = Bound(argument, definition.ge, definition.le)
    default = Role.VIEWER if method in READ_METHODS else Role.MEMBER
    needed = Role(handler.opt.get("role", default))
    workers_only = bool(handler.opt.get(WORKERS_ONLY))
    roles = {role for role, rank in ROLE_RANK.items() if rank >= ROLE_RANK[needed] and not workers_only}
    if handler.opt.get(WORKER_PROTOCOL):
        roles.add(Role.WORKER)
    return Lane(
        method=method,
        prefix=prefix,
        suffix=suffix,
        parameter=parameter,
        caseless=parameter is not None and is_caseless(parameter),
        call=handler.fn,
        roles=frozenset(roles),
        workers_only=workers_only,
        status=handler.status_code,
        query=query,
        body=body,
        handler=handler,
        request="request" in handler.parsed_fn_signature.parameters,
        template=route.path_format,
    )


def _segments(path_format: str) -> list[str | None]:
    """A route's path as segments, None for a parameter."""
    return [None if part.startswith("{") else part for part in path_format.strip("/").split("/")]


def refuse_overlaps(lane: Lane, route: HTTPRoute, litestar: Litestar) -> None:
    """Refuse (at start) a lane whose paths another route could also match: Litestar's router would choose
    between them (static segments first), the lane would not. A static path equal to one of the lane's is
    handed on at request time instead (`static_paths`)."""
    mine = _segments(route.path_format)
    for other in litestar.routes:
        if other is route or not other.path_parameters:
            continue
        theirs = _segments(other.path_format)
        if len(theirs) == len(mine) and all(
            a is None or b is None or a == b for a, b in zip(mine, theirs, strict=True)
        ):
            raise ValueError(f"{lane.handler.operation_id}: the fast lane's path overlaps {other.path_format}")
