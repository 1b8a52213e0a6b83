"""Traces: a span per request, and one trace id that follows an execution from execute to lease to completion;
nothing at all (not even the SDK loaded) when tracing is off."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from controlplane_http.bootstrap import build_app
from tests.conftest import app_settings
from tests.http.test_agents import create_agent
from tests.http.test_executions import lease, setup_queue
from tests.support import SERVICE_KEY, bearer

CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{CLIENT_TRACE}-00f067aa0ba902b7-01"


@pytest.fixture
def traced() -> Iterator[tuple[TestClient[Any], InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with TestClient(build_app(app_settings("memory://"), tracer_provider=provider)) as client:
        client.headers.update(bearer(SERVICE_KEY))
        yield client, exporter


def named(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    (span,) = [span for span in spans if span.name == name]
    return span


def test_one_trace_follows_an_execution_from_execute_to_completion(
    traced: tuple[TestClient[Any], InMemorySpanExporter],
) -> None:
    client, exporter = traced
    agent = create_agent(client, "traced")["id"]
    _, queue = setup_queue(client)
    body = {"prompt": "p", "worker_queue_id": queue}
    created = client.post(f"/api/v1/agents/{agent}/execute", json=body, headers={"traceparent": TRACEPARENT})
    assert created.status_code == 201
    execution = created.json()["id"]
    leased = lease(client, queue)
    assert leased is not None
    done = client.post(
        f"/api/v1/executions/{execution}/complete",
        json={"worker_id": "w1", "attempt": leased["attempt"], "status": "completed", "response": "ok"},
    )
    assert done.status_code == 200
    spans = exporter.get_finished_spans()
    execute_request = named(spans, "POST /api/v1/agents/{agent_id}/execute")
    assert execute_request.context is not None
    assert execute_request.context.trace_id == int(CLIENT_TRACE, 16)
    assert execute_request.attributes is not None
    assert execute_request.attributes["http.response.status_code"] == 201
    assert execute_request.attributes["http.route"] == "/api/v1/agents/{agent_id}/execute"
    assert execute_request.attributes["http.request_id"] == created.headers["x-request-id"]
    steps = [named(spans, f"execution.{step}") for step in ("execute", "lease", "complete")]
    for step in steps:  # one trace: the client's, through the execute's request span
        assert step.context is not None
        assert step.context.trace_id == int(CLIENT_TRACE, 16)
        assert step.parent is not None
        assert step.parent.span_id == execute_request.context.span_id
        assert step.attributes is not None
        assert step.attributes["execution.id"] == execution
    lease_request = named(spans, "POST /api/v1/worker-queues/{queue_id}/lease")
    assert lease_request.context is not None
    assert lease_request.context.trace_id != int(CLIENT_TRACE, 16)
    assert [link.context.span_id for link in steps[1].links] == [lease_request.context.span_id]
    assert steps[2].attributes is not None
    assert steps[2].attributes["execution.status"] == "completed"


def test_requests_answered_before_routing_have_spans_too(
    traced: tuple[TestClient[Any], InMemorySpanExporter],
) -> None:
    client, exporter = traced
    assert client.get("/api/v1/teams", headers=bearer("wrong")).status_code == 401
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["http.response.status_code"] == 401


def test_without_tracing_nothing_of_opentelemetry_is_loaded() -> None:
    """(Its semantic conventions, plain constants, are loaded by the test client's libraries.)"""
    script = (
        "import sys, json\n"
        "LOADED = ('opentelemetry.sdk', 'opentelemetry.trace', 'opentelemetry.context', 'opentelemetry.exporter')\n"
        "from litestar.testing import TestClient\n"
        "from controlplane_adapters.settings.model import Settings\n"
        "from controlplane_http.bootstrap import build_app\n"
        "app = build_app(Settings(database_url='memory://', service_api_key='k'))\n"
        "with TestClient(app) as client:\n"
        "    agent = client.post('/api/v1/agents', json={'name': 'a'}, headers={'Authorization': 'Bearer k'})\n"
        "    assert agent.status_code == 201, agent.text\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(LOADED))))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "[]"
