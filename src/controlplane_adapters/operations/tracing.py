"""OpenTelemetry traces, on only when an OTLP endpoint is configured (`OTEL_EXPORTER_OTLP_ENDPOINT` or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`: `Settings.tracing`): this module is imported only then (bootstrap), so that a
server without tracing neither loads the SDK nor spends anything on it.

A request's span (`RequestTrace`, kept in `scope["state"]["trace"]`) continues the caller's `traceparent` when it
sends one. An execution carries the W3C `traceparent` of the request that created it (`Execution.trace_parent`,
stored with it), and its later steps (the lease, the completion) are spans of that same trace, linked to the
request span that served them: one trace id follows an execution from execute to lease to completion.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Link, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from controlplane_domain.executions.entity import Execution

TRACER_NAME = "controlplane"
PROPAGATOR = TraceContextTextMapPropagator()


def otlp_provider(headers: Mapping[str, str] | None = None) -> TracerProvider:
    """A tracer provider exporting in batches to the OTLP/HTTP endpoint the standard `OTEL_*` variables name
    (endpoint, timeout; `OTEL_SERVICE_NAME`, default `controlplane`), with `headers` (`Settings.otlp_headers`: the
    server withdrew `OTEL_EXPORTER_OTLP_HEADERS` from its environment once its settings held them)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    resource = Resource.create({"service.name": "controlplane"})  # OTEL_SERVICE_NAME / _RESOURCE_ATTRIBUTES win
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(headers=dict(headers) if headers else None)))
    return provider


def parent_context(headers: list[tuple[bytes, bytes]]) -> otel_context.Context | None:
    """The caller's trace context (`traceparent`, `tracestate`), or None when it sent none."""
    carrier = {
        name.decode("latin-1"): value.decode("latin-1")
        for name, value in headers
        if name in (b"traceparent", b"tracestate")
    }
    return PROPAGATOR.extract(carrier) if carrier else None


class RequestTrace:
    """The span of one request, and what the handlers ask of it."""

    __slots__ = ("span", "tracer")

    def __init__(self, tracer: trace.Tracer, span: trace.Span) -> None:
        self.tracer = tracer
        self.span = span

    def trace_parent(self) -> str | None:
        """The request span's W3C `traceparent`, to be stored with what it creates."""
        carrier: dict[str, str] = {}
        PROPAGATOR.inject(carrier, context=trace.set_span_in_context(self.span))
        return carrier.get("traceparent")

    def execution_step(self, name: str, execution: Execution) -> None:
        """A span `name` in the execution's trace (a child of the request that created it), from this request's
        start to now, linked to this request's span."""
        parent = PROPAGATOR.extract({"traceparent": execution.trace_parent}) if execution.trace_parent else None
        attributes: dict[str, Any] = {
            "execution.id": execution.id,
            "execution.status": execution.status.value,
            "execution.attempt": execution.attempt,
            "organization.id": execution.organization_id,
            "worker_queue.id": execution.worker_queue_id,
        }
        if execution.worker_id:
            attributes["worker.id"] = execution.worker_id
        self.span.set_attribute("execution.id", execution.id)
        step = self.tracer.start_span(
            name,
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=[Link(self.span.get_span_context())],
            start_time=getattr(self.span, "start_time", None),
        )
        if execution.status.value == "failed":
            step.set_status(Status(StatusCode.ERROR, execution.error or "failed"))
        step.end()
