"""Operations against a real `controlplane serve`: metrics summed across `--workers 2`, JSON log lines with
request ids and no secret at the most verbose level, and spans exported over OTLP/HTTP to a local receiver."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.parser import text_string_to_metric_families

from tests.databases import truncate
from tests.e2e.conftest import start_server, stop_server
from tests.support import JWT_SECRET, PATIENCE, SERVICE_KEY, bearer, make_jwt, wait_until

METRICS_TOKEN = "e2e-metrics-token-5678"
SECRET_VALUE = "sk-live-do-not-log-0123456789"


def teams_counted(client: httpx.Client, url: str) -> float:
    text = client.get(f"{url}/metrics").text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "controlplane_http_requests_total"
        and sample.labels == {"method": "GET", "route": "/api/v1/teams", "status": "200"}
    )


def teams_timed(client: httpx.Client, url: str) -> tuple[float, float]:
    """The latency histogram's count and its +Inf bucket for GET /api/v1/teams."""
    text = client.get(f"{url}/metrics").text
    samples = {
        sample.name + sample.labels.get("le", ""): sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "controlplane_http_request_duration_seconds" and family.type == "histogram"
        for sample in family.samples
        if sample.labels.get("route") == "/api/v1/teams" and sample.labels.get("method") == "GET"
    }
    prefix = "controlplane_http_request_duration_seconds"
    return samples.get(f"{prefix}_count", 0.0), samples.get(f"{prefix}_bucket+Inf", 0.0)


def test_metrics_are_summed_across_the_server_processes(tmp_path: Path, postgres_url: str) -> None:
    asyncio.run(truncate(postgres_url))
    server = start_server(tmp_path, postgres_url, args=("--workers", "2"))
    try:
        processes: set[str] = set()
        sent = 0
        # no connection kept: each request a new connection, which the kernel hands to either process
        fresh = httpx.Limits(max_keepalive_connections=0)
        with httpx.Client(headers=bearer(SERVICE_KEY), timeout=PATIENCE, limits=fresh) as client:
            for _ in range(400):
                response = client.get(f"{server.url}/api/v1/teams")
                assert response.status_code == 200
                processes.add(response.headers["x-request-id"][:16])  # a request id starts with its process's
                sent += 1
                if len(processes) == 2 and sent >= 20:
                    break
            assert len(processes) == 2, "every request went to one process"
            wait_until(lambda: teams_counted(client, server.url) == sent)  # each flushes its counts every second
            assert teams_timed(client, server.url) == (sent, sent)  # the latency histogram, summed across processes
    finally:
        stop_server(server)


def test_json_log_lines_carry_request_ids_and_no_secret(tmp_path: Path) -> None:
    server = start_server(
        tmp_path,
        f"sqlite+aiosqlite:///{tmp_path / 'logs.db'}",
        args=("--access-log",),
        CONTROLPLANE_LOG_FORMAT="json",
        CONTROLPLANE_LOG_LEVEL="trace",  # uvicorn logs every ASGI message, headers included
        CONTROLPLANE_METRICS_TOKEN=METRICS_TOKEN,
    )
    jwt = make_jwt("default", sub="logger", roles=["admin"])
    ids = []
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            created = client.post(
                "/api/v1/secrets", json={"name": "openai", "value": SECRET_VALUE}, headers=bearer(SERVICE_KEY)
            )
            assert created.status_code == 201, created.text
            ids.append(created.headers["x-request-id"])
            listed = client.get("/api/v1/secrets", headers={**bearer(jwt), "X-Request-ID": "client-chosen-1"})
            assert listed.status_code == 200
            ids.append("client-chosen-1")
            refused = client.get(f"/api/v1/teams?api_key={SERVICE_KEY}", headers=bearer(f"{SERVICE_KEY}x"))
            assert refused.status_code == 401
            ids.append(refused.headers["x-request-id"])
            assert client.get("/metrics", headers=bearer(METRICS_TOKEN)).status_code == 200
    finally:
        stop_server(server)
    text = server.log.read_text()
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]  # every line is JSON
    assert {"time", "level", "logger", "message", "request_id"} <= set(lines[0])
    access = {line["request_id"]: line for line in lines if line["logger"] == "uvicorn.access"}
    for request_id in ids:
        assert request_id in access, request_id
    assert access["client-chosen-1"]["path"] == "/api/v1/secrets"
    assert any(line["logger"] == "uvicorn.asgi" for line in lines)  # the trace level's lines are there
    for secret in (SERVICE_KEY, JWT_SECRET, jwt, SECRET_VALUE, METRICS_TOKEN):
        assert secret not in text


class Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint: keeps every exported span as (trace id, span id, parent id, name)."""

    spans: list[tuple[str, str, str, str]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    entry = (span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex(), span.name)
                    self.server.spans.append(entry)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[tuple[str, str, str, str]]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.spans = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.spans  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        thread.join()


def test_an_executions_spans_reach_an_otlp_receiver_in_one_trace(
    tmp_path: Path, receiver: tuple[str, list[tuple[str, str, str, str]]]
) -> None:
    endpoint, spans = receiver
    server = start_server(
        tmp_path,
        f"sqlite+aiosqlite:///{tmp_path / 'traces.db'}",
        OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
        OTEL_BSP_SCHEDULE_DELAY="100",
        OTEL_SERVICE_NAME="controlplane-e2e",
    )
    try:
        with server.client() as client:
            agent = client.post("/api/v1/agents", json={"name": "traced"}).json()["id"]
            environment = client.post("/api/v1/environments", json={"name": "e"}).json()["id"]
            queue = client.post(f"/api/v1/environments/{environment}/worker-queues", json={"name": "q"}).json()["id"]
            execution = client.post(f"/api/v1/agents/{agent}/execute", json={"prompt": "p", "worker_queue_id": queue})
            assert execution.status_code == 201
            lease = client.post(f"/api/v1/worker-queues/{queue}/lease", json={"worker_id": "w", "wait_seconds": 0})
            assert lease.status_code == 200
            done = client.post(
                f"/api/v1/executions/{execution.json()['id']}/complete",
                json={"worker_id": "w", "attempt": 1, "status": "completed"},
            )
            assert done.status_code == 200

        def steps() -> dict[str, str]:
            return {name: trace for trace, _, _, name in spans if name.startswith("execution.")}

        wait_until(lambda: len(steps()) == 3)
        assert len(set(steps().values())) == 1  # one trace id from execute to lease to completion
        (request,) = [span for span in spans if span[3] == "POST /api/v1/agents/{agent_id}/execute"]
        assert request[0] == steps()["execution.execute"]
    finally:
        stop_server(server)
