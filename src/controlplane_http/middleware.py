"""ASGI middleware: authentication with per-credential rate limits, and Idempotency-Key replay."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

import msgspec

from controlplane_adapters.ratelimit import RateDecision, RateLimiter
from controlplane_adapters.settings.model import AuthSettings
from controlplane_domain.audit.context import leave as leave_audit
from controlplane_domain.errors import DomainError, Unauthenticated
from controlplane_domain.ports import Ports, TokenVerifier
from controlplane_domain.principal import Principal
from controlplane_http.api_docs.controller import ASSETS_PREFIX as DOCS_ASSETS_PREFIX
from controlplane_http.audit.context import enter_audit
from controlplane_http.body import foreign_media_type
from controlplane_http.clients import client_address, networks
from controlplane_http.errors import domain_error, envelope, validation_body
from controlplane_http.limits import LimitPolicy
from controlplane_http.security import READ_METHODS, Probe, authorize

log = logging.getLogger("controlplane.http")

# Plain ASGI shapes (Litestar's TypedDicts are stricter than what a pass-through middleware needs).
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# The OpenAPI document and its Swagger page: the only paths served without credentials (exactly these), with the
# page's assets (under DOCS_ASSETS_PREFIX); the metrics, which check their own (operations/controller.py: the
# metrics token, or loopback callers only); and the dashboard's page and assets (under DASHBOARD_PREFIX: they hold
# no data; the page asks the API with a key).
PUBLIC_PATHS = frozenset({"/api/openapi.json", "/api/docs", "/api/docs/", "/metrics"})
DASHBOARD_PREFIX = "/dashboard"
# Job webhooks: no bearer (the Standard Webhooks signature authenticates a delivery, checked by the route), counted
# per job (`webhook:<job id>`), whoever sends them. Exactly `POST /api/v1/webhooks/jobs/<one segment>`: the
# webhooks area's routes (`/api/v1/webhooks/{webhook_id}/...`, bearer required) share the prefix `/api/v1/webhooks/`.
WEBHOOK_PREFIX = "/api/v1/webhooks/jobs/"


def is_public(path: str) -> bool:
    """A path served without credentials (counted per client address)."""
    return (
        path in PUBLIC_PATHS
        or path == DASHBOARD_PREFIX
        or path.startswith((DASHBOARD_PREFIX + "/", DOCS_ASSETS_PREFIX))
    )


def is_job_webhook(method: str, path: str) -> bool:
    """A delivery to a job's webhook: the one public route under /api/v1/webhooks/."""
    return method == "POST" and path.startswith(WEBHOOK_PREFIX) and "/" not in path[len(WEBHOOK_PREFIX) :].rstrip("/")


HEARTBEAT_PATH = "/api/v1/workers/heartbeat"
STORAGE_FILES = "/api/v1/storage/files/"
WORKER_SUFFIXES = ("/lease", "/complete", "/events")


def is_worker_traffic(method: str, path: str) -> bool:
    """Heartbeats, leases, event batches and completions (the worker protocol's POSTs) count against the worker
    budget; everything else, reading workers included, against the credential's API budget."""
    return method == "POST" and (path == HEARTBEAT_PATH or path.endswith(WORKER_SUFFIXES))


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def send_json(send: Send, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
    payload = msgspec.json.encode(body)
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(name.lower().encode(), value.encode()) for name, value in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})


# The headers every answer to a request carries (lowercase name and value, as bytes), whoever gives the answer: a
# list in the scope that the outermost middleware (operations/requests.py: `Observed`, which adds the request id)
# makes and adds to the response start, and that the middleware inside it extend (the rate-limit headers). One
# `send` wrapper for all of them, rather than one a middleware.
RESPONSE_HEADERS = "controlplane.response_headers"


class SecurityMiddleware:
    """Authenticates every request, counts it against its credential's budget, and labels every response.

    It wraps the whole app, routing included (see app.create_app): a request to a path or method that does not
    exist is authenticated and counted like any other (401 without credentials, 429 past the budget), and only
    then answered 404 or 405. What needs the route (the role it asks for, its query parameters) is checked
    after routing by `AuthorizationMiddleware`. It runs inside `operations.requests.Observed`, whose list of the
    answer's headers (`RESPONSE_HEADERS`) it extends with the rate-limit headers."""

    def __init__(
        self, app: ASGIApp, verifier: TokenVerifier, auth: AuthSettings, anonymous: Principal, limiter: RateLimiter,
        limits: LimitPolicy, ports: Ports, trusted_proxies: Sequence[str] = (),
    ) -> None:  # fmt: skip
        self.app = app
        self.trusted = networks(trusted_proxies)
        self.ports = ports
        self.verifier = verifier
        self.auth = auth
        self.anonymous = anonymous
        self.limiter = limiter
        self.limits = limits
        self.key_header = auth.api_key_header.lower().encode()

    def _token(self, scope: Scope) -> str | None:
        token: str | None = None
        authorization = header(scope, b"authorization")
        if authorization is not None:
            scheme, _, value = authorization.strip().partition(" ")
            if scheme.lower() != "bearer" or not value.strip():
                raise Unauthenticated()
            token = value.strip()
        if self.key_header != b"authorization" and (raw := header(scope, self.key_header)):
            key = raw.strip()
            token = key[7:].strip() if key.lower().startswith("bearer ") else key
        return token

    async def _authenticate(self, scope: Scope) -> Principal:
        token = self._token(scope)
        if token is None:
            if self.auth.required:
                raise Unauthenticated()
            return self.anonymous
        return await self.verifier.verify(token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            headers = await self._admit(scope, send)
        except Exception:  # outside Litestar's exception handling (before routing): answer as it would
            # the request's id (operations/requests.py, whose middleware also sends it as X-Request-ID)
            request_id = scope.get("state", {}).get("request_id") or str(uuid.uuid4())
            log.exception("unhandled error admitting %s %s (request %s)", scope["method"], scope["path"], request_id)
            body = envelope(500, "INTERNAL_ERROR", "internal server error", {"request_id": request_id})
            await send_json(send, 500, body)
            return
        if headers is not None:
            scope[RESPONSE_HEADERS].extend(headers)
            await self.app(scope, receive, send)

    async def _admit(self, scope: Scope, send: Send) -> list[tuple[bytes, bytes]] | None:
        """Authenticate and count the request: the rate-limit headers to add when it may go on, or None when
        it was answered here (401, 429, 503)."""
        path: str = scope["path"]
        client = client_address(scope, self.trusted) or "unknown"  # (the audit context reads the same)
        failure: DomainError | None = None
        principal: Principal | None = None
        if is_public(path):
            decision = await self.limiter.hit(f"ip:{client}", self.limits.anonymous_per_minute)
        elif is_job_webhook(scope["method"], path):
            job = path[len(WEBHOOK_PREFIX) :].strip("/").lower()
            decision = await self.limiter.hit(f"webhook:{job}", self.limits.webhook_per_minute)
        else:
            try:
                principal = await self._authenticate(scope)
            except DomainError as exc:  # Unauthenticated, or Unavailable while checking a stored key
                failure = exc
            if principal is None:
                decision = await self.limiter.hit(f"ip:{client}", self.limits.anonymous_per_minute)
            else:
                try:
                    decision = await self._count(principal, scope["method"], path)
                except DomainError as exc:  # the organization's figures could not be read (database away)
                    status, body, more = domain_error(exc)
                    await send_json(send, status, body, more)
                    return None
        if not decision.allowed:
            headers = decision.headers()
            headers["Retry-After"] = str(decision.retry_after(time.time()))
            message = f"rate limit of {decision.limit} requests a minute exceeded"
            await send_json(send, 429, envelope(429, "RATE_LIMITED", message), headers)
            return None
        if failure is not None:
            headers = decision.headers()
            status = 401 if isinstance(failure, Unauthenticated) else 503
            if status == 401:
                headers["WWW-Authenticate"] = 'Bearer realm="controlplane"'
            await send_json(send, status, envelope(status, failure.code, failure.message, failure.details), headers)
            return None
        if "\x00" in path and not path.startswith(STORAGE_FILES):  # no store keeps a NUL in an id (Postgres text
            # cannot hold one): nothing is there. A file's path is checked by its route (422, as for `..`).
            await send_json(send, 404, envelope(404, "NOT_FOUND", "no such resource"), decision.headers())
            return None
        query: bytes = scope.get("query_string", b"")
        if b"%00" in query or b"\x00" in query:
            for name, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
                if "\x00" in name or "\x00" in value:
                    body = validation_body(["query", name], "must not contain NUL characters")
                    await send_json(send, 422, body, decision.headers())
                    return None
        if principal is not None:
            scope["user"] = principal
        return decision.raw_headers()

    async def _count(self, principal: Principal, method: str, path: str) -> RateDecision:
        worker = is_worker_traffic(method, path)
        bucket = f"{'worker' if worker else 'api'}:{principal.credential_id}"
        if principal.operator:  # the service key: its own figure, never a tenant tier (docs/api-decisions.md)
            return await self.limiter.hit(bucket, self.limits.service())
        organization = principal.organization_id
        per_minute = await (self.limits.worker(organization) if worker else self.limits.api(organization))
        return await self.limiter.hit(bucket, per_minute)


class AuthorizationMiddleware:
    """After routing: unknown query parameters (422), the role the route needs (403, or 404 for objects of
    another organization), then a body that is not JSON (415, before it is read). The caller was authenticated by
    `SecurityMiddleware` before routing. A write then runs in its audit context (controlplane_http/audit).
    `visibility`: the areas' probes by path parameter (`areas.VISIBILITY`), for `security.require_role`."""

    def __init__(self, app: ASGIApp, ports: Ports, visibility: Mapping[str, Probe]) -> None:
        self.app = app
        self.ports = ports
        self.visibility = visibility

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            principal = scope.get("user")
            try:
                caller = principal if isinstance(principal, Principal) else None
                await authorize(self.ports, scope, caller, self.visibility)
            except DomainError as exc:
                status, body, more = domain_error(exc)
                await send_json(send, status, body, more)
                return
            if (media_type := foreign_media_type(scope)) is not None:
                message = "the request body must be JSON: Content-Type application/json (or application/*+json)"
                body = envelope(415, "UNSUPPORTED_MEDIA_TYPE", message, {"content_type": media_type})
                await send_json(send, 415, body)
                return
            if isinstance(principal, Principal) and scope["method"] not in READ_METHODS:
                # A write: its changes are recorded in the audit log as this caller's (reads record nothing). The
                # fast lane's routes never come here: they record nothing (docs/audit.md).
                token = enter_audit(scope, principal, self.ports)
                try:
                    await self.app(scope, receive, send)
                finally:
                    leave_audit(token)
                return
        await self.app(scope, receive, send)
