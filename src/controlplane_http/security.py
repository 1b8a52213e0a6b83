"""Authentication middleware (bearer JWT or API key) and the role guard."""

from __future__ import annotations

import logging
from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult
from litestar.types import ASGIApp

from controlplane_adapters.settings import AuthSettings
from controlplane_domain.errors import Forbidden, Unauthenticated
from controlplane_domain.ports import TokenVerifier
from controlplane_domain.principal import Principal, Role

log = logging.getLogger("controlplane.auth")

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC_PATHS = ("/api/openapi", "/api/docs")


def bearer_token(value: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, None when absent."""
    if value is None:
        return None
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated()
    return token.strip()


class BearerAuthMiddleware(AbstractAuthenticationMiddleware):
    """Turns the request's credentials into a Principal; 401 with one body for every failure."""

    def __init__(
        self,
        app: ASGIApp,
        verifier: TokenVerifier,
        auth: AuthSettings,
        anonymous: Principal,
        exclude: str | list[str] | None = None,
    ) -> None:
        super().__init__(app, exclude=exclude)
        self.verifier = verifier
        self.auth = auth
        self.anonymous = anonymous
        self.key_header = auth.api_key_header.lower()

    async def authenticate_request(self, connection: ASGIConnection[Any, Any, Any, Any]) -> AuthenticationResult:
        token = bearer_token(connection.headers.get("authorization"))
        if self.key_header != "authorization" and (raw := connection.headers.get(self.key_header)):
            key = raw.strip()
            token = key[7:].strip() if key.lower().startswith("bearer ") else key
        if token is None:
            if self.auth.required:
                raise Unauthenticated()
            return AuthenticationResult(user=self.anonymous, auth=None)
        principal = await self.verifier.verify(token)
        return AuthenticationResult(user=principal, auth=token)


def require_role(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """Reads need `viewer`, writes `member`, unless the route's `opt["role"]` asks for more."""
    principal = connection.scope.get("user")
    if not isinstance(principal, Principal):
        return  # public route (OpenAPI document)
    default = Role.VIEWER if connection.scope.get("method", "GET") in READ_METHODS else Role.MEMBER
    needed = Role(handler.opt.get("role", default))
    if not principal.can(needed):
        raise Forbidden(f"role '{principal.role}' may not perform this action; '{needed}' is required")
