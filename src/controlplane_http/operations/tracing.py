"""Traces as the handlers see them: nothing at all unless tracing is on (this module imports no OpenTelemetry).

When it is on (`OTEL_EXPORTER_OTLP_ENDPOINT`, see `controlplane_adapters.operations.tracing`), `Traced` puts the
request's `RequestTrace` in `scope["state"]["trace"]`; these helpers find it there, or do nothing."""

from __future__ import annotations

from typing import Any

from controlplane_domain.executions.entity import Execution

TRACE_KEY = "trace"


def trace_parent(scope: Any) -> str | None:
    """The W3C `traceparent` of the request's span, to store with an execution it creates; None without tracing."""
    trace = scope["state"].get(TRACE_KEY)
    return None if trace is None else trace.trace_parent()


def execution_step(scope: Any, name: str, execution: Execution) -> None:
    """A span `name` in the execution's own trace (see `RequestTrace.execution_step`); nothing without tracing."""
    trace = scope["state"].get(TRACE_KEY)
    if trace is not None:
        trace.execution_step(name, execution)
