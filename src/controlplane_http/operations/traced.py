"""A span for every request (kind SERVER, named `METHOD route template`), continuing the caller's `traceparent`.
In the middleware chain only when tracing is on (app.create_app), so that without it no request pays a thing."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode

from controlplane_adapters.operations.tracing import TRACER_NAME, RequestTrace, parent_context
from controlplane_http.middleware import ASGIApp, Message, Receive, Scope, Send
from controlplane_http.operations.requests import REQUEST_ID_KEY
from controlplane_http.operations.tracing import TRACE_KEY


class Traced:
    def __init__(self, app: ASGIApp, provider: TracerProvider) -> None:
        self.app = app
        self.tracer = provider.get_tracer(TRACER_NAME)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method: str = scope["method"]
        attributes = {
            "http.request.method": method,
            "url.path": scope["path"],
            "http.request_id": scope["state"].get(REQUEST_ID_KEY, ""),
        }
        parent = parent_context(scope["headers"])
        with self.tracer.start_as_current_span(
            method, context=parent, kind=SpanKind.SERVER, attributes=attributes
        ) as span:
            scope["state"][TRACE_KEY] = RequestTrace(self.tracer, span)

            async def traced(message: Message) -> None:
                if message["type"] == "http.response.start":
                    status: int = message["status"]
                    span.set_attribute("http.response.status_code", status)
                    if status >= 500:
                        span.set_status(Status(StatusCode.ERROR))
                await send(message)

            try:
                await self.app(scope, receive, traced)
            finally:
                route = scope.get("path_template")
                if route:
                    span.set_attribute("http.route", route)
                    span.update_name(f"{method} {route}")
