"""The role guard: reads need `viewer`, writes `member`, routes may ask for `admin`."""

from __future__ import annotations

import logging
import re
from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from controlplane_domain.errors import Forbidden, ValidationFailed
from controlplane_domain.principal import Principal, Role

log = logging.getLogger("controlplane.auth")

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC_PATHS = ("/api/openapi", "/api/docs")


def require_role(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """Reads need `viewer`, writes `member`, unless the route's `opt["role"]` asks for more."""
    principal = connection.scope.get("user")
    if not isinstance(principal, Principal):
        return  # public route (OpenAPI document)
    default = Role.VIEWER if connection.scope.get("method", "GET") in READ_METHODS else Role.MEMBER
    needed = Role(handler.opt.get("role", default))
    if not principal.can(needed):
        raise Forbidden(f"role '{principal.role}' may not perform this action; '{needed}' is required")


_RESERVED = frozenset({"data", "request", "state", "scope", "headers", "cookies", "query", "body"})
_QUERY_NAMES: dict[str, frozenset[str]] = {}


def _declared_query(handler: BaseRouteHandler) -> frozenset[str]:
    names = _QUERY_NAMES.get(handler.handler_id)
    if names is None:
        parameters = set(handler.parsed_fn_signature.parameters)
        dependencies = set(handler.resolve_dependencies())
        path_names = {name.split(":")[0] for path in handler.paths for name in re.findall(r"{([^}]+)}", path)}
        names = frozenset(parameters - dependencies - path_names - _RESERVED)
        _QUERY_NAMES[handler.handler_id] = names
    return names


def reject_unknown_query(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """A query parameter the route does not declare is a validation error, like an unknown body field."""
    if not connection.scope.get("query_string"):
        return
    unknown = sorted(set(connection.query_params) - _declared_query(handler))
    if unknown:
        raise ValidationFailed(unknown[0], "unknown query parameter", "query")
