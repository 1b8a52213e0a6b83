"""The role guard: reads need `viewer`, writes `member`, routes may ask for `admin`."""

from __future__ import annotations

import logging
from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from controlplane_domain.errors import Forbidden
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
