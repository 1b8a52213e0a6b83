"""`GET /metrics`: Prometheus' text format, for the metrics token's bearer, or for loopback callers when no token
is set (`CONTROLPLANE_METRICS_TOKEN`). No API key is asked (SecurityMiddleware lets the path through)."""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

from litestar import Controller, MediaType, Response, get
from litestar.openapi.datastructures import ResponseSpec
from litestar.types import Scope

from controlplane_domain.errors import Forbidden, Unauthenticated
from controlplane_domain.operations.usecases import read_gauges
from controlplane_domain.ports import Ports
from controlplane_http.area import HttpArea
from controlplane_http.handlers import errors
from controlplane_http.middleware import header

METRICS_PATH = "/metrics"
METRICS_TOKEN_KEY = "metrics_token"  # noqa: S105 (a name, not a password): the app state's key of CONTROLPLANE_METRICS_TOKEN (None: loopback only)


def is_loopback(client: Any) -> bool:
    """A loopback address (127.0.0.0/8, ::1, IPv4-mapped too); no address at all is a Unix socket, local too."""
    if not client:
        return True
    try:
        address = ipaddress.ip_address(str(client[0]))
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def check_scraper(scope: Any, token: str | None) -> None:
    """Unauthenticated (401) without the token's bearer when a token is set; Forbidden (403) for a caller that is
    not on loopback when none is."""
    if token is None:
        if not is_loopback(scope.get("client")):
            raise Forbidden("metrics are served to loopback callers only unless CONTROLPLANE_METRICS_TOKEN is set")
        return
    scheme, _, given = (header(scope, b"authorization") or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise Unauthenticated()


class MetricsController(Controller):
    path = METRICS_PATH
    tags = ["health"]

    @get(
        "/",
        operation_id="getMetrics",
        media_type=MediaType.TEXT,  # (the response says which version of the text format: CONTENT_TYPE)
        security=[{"MetricsToken": []}, {}],  # ({}: loopback callers need nothing when no token is set)
        responses={
            **errors(),
            200: ResponseSpec(
                str, description="Prometheus text format", media_type="text/plain", generate_examples=False
            ),
        },
    )
    async def metrics(self, scope: Scope) -> Response[bytes]:
        """The service's metrics (docs/operations.md "Metrics"): requests by route template and status, their
        latency, live executions, queue depth and age, workers by status, webhook deliveries, scheduler lag.
        With `CONTROLPLANE_METRICS_TOKEN` set: `Authorization: Bearer <that token>` (401 otherwise); unset: loopback
        callers only (403 otherwise)."""
        state = scope["app"].state
        check_scraper(scope, state.get(METRICS_TOKEN_KEY))
        ports: Ports = state["ports"]
        # prometheus-client is loaded by the first scrape (request_counts.py)
        from controlplane_adapters.operations.metrics import CONTENT_TYPE, exposition

        body = exposition(await read_gauges(ports))
        return Response(body, media_type=CONTENT_TYPE)


AREA = HttpArea((MetricsController,))
