"""The Litestar application factory: it takes its adapters, so tests and embedders pass their own."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme, Server
from litestar.routes import HTTPRoute

from controlplane_adapters.operations.request_counts import STATS
from controlplane_adapters.ratelimit import RateLimiter
from controlplane_adapters.settings.model import AuthSettings
from controlplane_domain.ports import HealthProbe, Ports, TokenVerifier
from controlplane_domain.principal import Principal, Role
from controlplane_http import API_TITLE, API_VERSION, OPENAPI_VERSION
from controlplane_http.api_docs.controller import swagger_page
from controlplane_http.areas import CONTROLLERS, VISIBILITY
from controlplane_http.body import StrictJSONBody
from controlplane_http.errors import handle_exception
from controlplane_http.executions.streaming import StreamOptions
from controlplane_http.fastlane.lane import FastLane
from controlplane_http.fastlane.routes import HOT_OPERATIONS
from controlplane_http.handlers import DEFAULT_PUBLIC_URL, PUBLIC_URL_KEY, provide_principal
from controlplane_http.health.controller import Diagnostics
from controlplane_http.idempotency import Idempotency, IdempotencyMiddleware
from controlplane_http.limits import LimitPolicy
from controlplane_http.middleware import (
    ASGIApp,
    AuthorizationMiddleware,
    Message,
    Receive,
    Scope,
    SecurityMiddleware,
    Send,
)
from controlplane_http.openapi import RequestBodySchemas
from controlplane_http.operations.controller import METRICS_TOKEN_KEY
from controlplane_http.operations.requests import Observed
from controlplane_http.responses import FastResponse

DEFAULT_MAX_BODY_BYTES = 1024 * 1024


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title=API_TITLE,
        version=OPENAPI_VERSION,
        description=f"Multi-tenant control plane for AI agents, teams, workers and executions (API {API_VERSION}). "
        "Request bodies are JSON objects without unknown fields; no text may hold U+0000 (NUL): both are 422.",
        path="/api",
        render_plugins=[swagger_page("/docs")],  # (its assets from the package: api_docs/)
        servers=[Server(url="/")],
        components=Components(
            security_schemes={
                "BearerAuth": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    bearer_format="JWT",
                    description="An API key or an HS256 JWT (claims sub, org_id, exp).",
                ),
                "MetricsToken": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="CONTROLPLANE_METRICS_TOKEN (GET /metrics only; unset: loopback callers only)",
                ),
            }
        ),
        security=[{"BearerAuth": []}],
        use_handler_docstrings=True,
    )


T = TypeVar("T")


def _after_principal(value: T) -> Callable[[Principal], T]:
    """A provider of `value` that Litestar resolves after the principal (see the dependencies below)."""

    def provide(principal: NamedDependency[Principal]) -> T:
        return value

    return provide


def create_app(
    *,
    ports: Ports,
    verifier: TokenVerifier,
    health_probe: HealthProbe,
    auth: AuthSettings,
    policy: LimitPolicy,
    limiter: RateLimiter,
    default_organization: str = "default",
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    trusted_proxies: Sequence[str] = (),
    fast_lane: bool = True,
    stream_options: StreamOptions | None = None,
    backend: str = "memory",
    rendered_pages: bool = False,
    on_startup: Sequence[Callable[[], Any]] = (),
    on_shutdown: Sequence[Callable[[], Any]] = (),
    debug: bool = False,
    metrics_token: str | None = None,
    tracer_provider: Any = None,
    public_url: str = DEFAULT_PUBLIC_URL,
) -> Litestar:
    """Build the HTTP app around the given adapters (`tracer_provider`: an OpenTelemetry `TracerProvider`, or None
    for no tracing at all; `public_url`: the base of the URLs answers hand out, never taken from a request)."""
    diagnostics = Diagnostics(health_probe, backend)
    options = stream_options or StreamOptions()
    anonymous = Principal(default_organization, "anonymous", Role.ADMIN, "none", "anonymous")
    authorization = DefineMiddleware(cast(Any, AuthorizationMiddleware), ports=ports, visibility=VISIBILITY)
    idempotency = DefineMiddleware(
        cast(Any, IdempotencyMiddleware), idempotency=Idempotency(ports), max_body_bytes=max_body_bytes
    )
    app = Litestar(
        route_handlers=CONTROLLERS,  # every area's (areas.py: one line an area, the OpenAPI document's order)
        # Chained on purpose (ports -> principal -> the rest): Litestar resolves a batch of sibling dependencies
        # in an anyio task group, which costs more than the dependencies themselves.
        dependencies={
            "ports": Provide(lambda: ports, use_cache=True, sync_to_thread=False),
            "principal": Provide(provide_principal),
            "diagnostics": Provide(_after_principal(diagnostics), sync_to_thread=False),
            "policy": Provide(_after_principal(policy), sync_to_thread=False),
        },
        middleware=[authorization, idempotency],
        state=State(
            {
                "ports": ports,
                "rendered_pages": rendered_pages,
                "stream_options": options,
                "max_body_bytes": max_body_bytes,
                METRICS_TOKEN_KEY: metrics_token,
                PUBLIC_URL_KEY: public_url.rstrip("/"),
            }
        ),
        request_max_body_size=max_body_bytes,
        exception_handlers={Exception: handle_exception},
        dto=StrictJSONBody,
        response_class=FastResponse,
        return_dto=None,
        openapi_config=openapi_config(),
        plugins=[RequestBodySchemas()],
        on_startup=list(on_startup),
        on_shutdown=list(on_shutdown),
        debug=debug,
        # Logging is the embedder's (the CLI configures it once, uvicorn's workers included): Litestar's own
        # default would replace it in every worker process with a queue handler that drops the last records
        logging_config=None,
    )
    # Authentication and rate limits wrap routing itself, so that unknown paths and methods are authenticated
    # and counted too (Litestar's own middleware runs only once a route matched). The fast lane, between them,
    # serves the hottest routes' plain requests by the same handlers without Litestar's per-request machinery.
    routed: Any = OptionsAllow(cast(Any, app.asgi_handler), app)
    if fast_lane:
        routed = FastLane(routed, app, HOT_OPERATIONS, max_body_bytes)
    outer: Any = SecurityMiddleware(routed, verifier, auth, anonymous, limiter, policy, ports, trusted_proxies)
    if tracer_provider is not None:  # (imported only then: without tracing, nothing of OpenTelemetry is loaded)
        from controlplane_http.operations.traced import Traced

        outer = Traced(outer, tracer_provider)
    # Outermost: the request id and the request metrics, for every answer whoever gives it
    app.asgi_handler = cast(Any, Observed(outer, app, STATS))
    return app


class OptionsAllow:
    """Litestar's automatic OPTIONS answers, with an `Allow` header that lists every method of their path.

    Litestar builds a path's OPTIONS handler when the path's first handler is registered and keeps it when the
    others join, so its `Allow` names only the first method. This sets the header of an answer to OPTIONS that
    carries one from the route's final methods (`HTTPRoute.methods`), by the route's template."""

    def __init__(self, app: ASGIApp, litestar: Litestar) -> None:
        self.app = app
        self.allow = {
            route.path_format: ", ".join(sorted(route.methods)).encode("latin-1")
            for route in litestar.routes
            if isinstance(route, HTTPRoute)
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "OPTIONS":
            await self.app(scope, receive, send)
            return

        async def corrected(message: Message) -> None:
            allow = self.allow.get(scope.get("path_template", ""))
            if message["type"] == "http.response.start" and allow is not None:
                headers = message.get("headers", ())
                if any(name.lower() == b"allow" for name, _ in headers):
                    message["headers"] = [(n, v) for n, v in headers if n.lower() != b"allow"] + [(b"allow", allow)]
            await send(message)

        await self.app(scope, receive, corrected)
