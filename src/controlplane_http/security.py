"""Authorization: reads need `viewer`, writes `member`, routes may ask for `admin`; worker keys call the worker
protocol only, and only they and the service key lease; unknown query parameters are 422."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from litestar.handlers.base import BaseRouteHandler
from litestar.params import CookieParameter, HeaderParameter, ParameterKwarg, QueryParameter

from controlplane_domain.errors import Forbidden, ValidationFailed
from controlplane_domain.ports import Ports
from controlplane_domain.principal import Principal, Role

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


Probe = Callable[[Ports, Principal, str], Awaitable[object]]
"""Whether the object a path parameter names is visible to the caller: NotFound when it is not. Each area declares
its own beside its controllers (`area.HttpArea`); `areas.VISIBILITY` holds them all, by path parameter."""


# Path parameters that name objects whose ids the server makes: UUIDs, and API keys' ids (hex), always written in
# lowercase. A path may spell them in any case (RFC 4122: UUIDs compare case-insensitively): they are lowercased
# before the role check and the handler see them, here for Litestar's routes and by the fast lane for its own.
# Worker ids and organization ids are the clients' own strings: they stay exactly as written.
CLIENT_IDS = frozenset({"worker_id", "organization_id"})


def is_caseless(name: str) -> bool:
    """Whether a path parameter is a server-made id (every `*_id` but the clients' own, `CLIENT_IDS`): a new area's
    ids are caseless without a line here."""
    return name.endswith("_id") and name not in CLIENT_IDS


def lowercase_ids(path_params: dict[str, Any]) -> None:
    """Lowercase the server-made ids among a route's path parameters (`is_caseless`)."""
    for name, value in path_params.items():
        if isinstance(value, str) and is_caseless(name):
            path_params[name] = value.lower()


WORKER_PROTOCOL = "worker_protocol"
"""A route's `opt` key: the route is part of the worker protocol (worker keys may call it; they may call no other)."""
WORKERS_ONLY = "workers_only"
"""A route's `opt` key: only a caller that `may_lease` (a worker key, the service key) may call it: the lease."""


def refusal(principal: Principal, opt: dict[str, Any], method: str) -> str | None:
    """Why the caller may not call a route with this `opt`, or None when it may.

    Reads need `viewer`, writes `member`, unless the route's `opt["role"]` asks for more. A worker key is not on
    that ladder: it may call the worker protocol's routes (`opt[WORKER_PROTOCOL]`) and nothing else. The lease
    (`opt[WORKERS_ONLY]`) hands out secret values: only worker keys and the service key may call it."""
    if principal.role is Role.WORKER:
        return None if opt.get(WORKER_PROTOCOL) else "a worker key may call the worker protocol only"
    if opt.get(WORKERS_ONLY) and not principal.may_lease:
        return "a lease carries secret values: only a worker key or the service key may lease"
    default = Role.VIEWER if method in READ_METHODS else Role.MEMBER
    needed = Role(opt.get("role", default))
    if principal.can(needed):
        return None
    return f"role '{principal.role}' may not perform this action; '{needed}' is required"


async def require_role(
    ports: Ports,
    principal: Principal,
    method: str,
    handler: BaseRouteHandler,
    path_params: dict[str, Any],
    visibility: Mapping[str, Probe],
) -> None:
    """Forbidden when the caller may not call the route (`refusal`).

    A caller whose role falls short learns 403 only about objects it can see: another organization's object is
    404 whatever the role, so the objects named in the path are looked up first (`visibility`: the probes by path
    parameter). A route whose `opt["writes_anywhere"]` is set skips them: a storage upload names a file of the
    caller's own organization, existing or not, so a viewer's PUT is 403 whether or not a file is there
    (docs/storage.md).
    """
    reason = refusal(principal, handler.opt, method)
    if reason is None:
        return
    if handler.opt.get("writes_anywhere"):  # a write that may name a new object (a storage upload): no probe
        raise Forbidden(reason)
    for name, value in path_params.items():
        probe = visibility.get(name)
        if probe is not None:
            await probe(ports, principal, str(value))
    raise Forbidden(reason)


_RESERVED = frozenset({"data", "request", "state", "scope", "headers", "cookies", "query", "body"})
_QUERY_NAMES = "controlplane_query_names"


def _query_alias(handler: BaseRouteHandler, name: str) -> str | None:
    """The name a parameter has in the query string when it differs from the handler's (`Parameter(query=...)`),
    e.g. `?scope=` where `scope` is the handler's ASGI scope."""
    definition = getattr(handler.parsed_fn_signature.parameters[name], "kwarg_definition", None)
    alias = getattr(definition, "query", None)
    if alias is None and isinstance(definition, QueryParameter):  # QueryParameter(name="scope")
        alias = getattr(definition, "name", None)
    return alias if isinstance(alias, str) else None


def _elsewhere(handler: BaseRouteHandler, name: str) -> bool:
    """Whether the parameter is read from a header or a cookie (`HeaderParameter(name="Last-Event-ID")`)."""
    definition = handler.parsed_fn_signature.parameters[name].kwarg_definition
    if isinstance(definition, HeaderParameter | CookieParameter):
        return True
    return isinstance(definition, ParameterKwarg) and bool(definition.header or definition.cookie)


def _declared_query(handler: BaseRouteHandler) -> frozenset[str]:
    """The query parameters the handler declares, kept in its `opt` (its `handler_id` is rebuilt per access)."""
    names: frozenset[str] | None = handler.opt.get(_QUERY_NAMES)
    if names is None:
        parameters = {name for name in handler.parsed_fn_signature.parameters if not _elsewhere(handler, name)}
        dependencies = set(handler.resolve_dependencies())
        path_names = {name.split(":")[0] for path in handler.paths for name in re.findall(r"{([^}]+)}", path)}
        declared = parameters - dependencies - path_names - _RESERVED
        aliases = {name: _query_alias(handler, name) for name in declared}
        names = handler.opt[_QUERY_NAMES] = frozenset(aliases[name] or name for name in declared)
    return names


QUERY_PREFIXES = "query_prefixes"
"""A route's `opt` key: the prefixes of the query parameters it reads by name itself (`property.KEY=`)."""


def reject_unknown_query(query_string: bytes, handler: BaseRouteHandler) -> None:
    """A query parameter the route does not declare is a validation error, like an unknown body field; the error
    names the ones it declares."""
    names = {name for name, _ in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)}
    prefixes: tuple[str, ...] = handler.opt.get(QUERY_PREFIXES, ())
    declared = _declared_query(handler)
    unknown = sorted(name for name in names - declared if not name.startswith(prefixes))
    if unknown:
        known = [*sorted(declared), *(f"{prefix}<key>" for prefix in prefixes)]
        named = f"known: {', '.join(known)}" if known else "this route takes none"
        error = ValidationFailed(unknown[0], f"unknown query parameter ({named})", "query")
        error.details["known"] = known  # (the 422's `details.known`: the same names, for a program)
        raise error


async def authorize(
    ports: Ports, scope: MutableMapping[str, Any], principal: Principal | None, visibility: Mapping[str, Probe]
) -> None:
    """Run by the authorization middleware once the route is known: unknown query parameters, the ids in the path
    (`lowercase_ids`), then the role (`require_role`, with the probes of `visibility`).

    (A middleware rather than a Litestar guard: guards get a copy of the route handler on every request.)"""
    handler = scope.get("route_handler")
    if handler is None:
        return
    if scope.get("query_string"):
        reject_unknown_query(scope["query_string"], handler)
    if scope.get("path_params"):
        lowercase_ids(scope["path_params"])
    if principal is not None:  # None: a public route (the OpenAPI document)
        await require_role(ports, principal, scope["method"], handler, scope.get("path_params") or {}, visibility)
