"""Log lines (text and JSON, credentials scrubbed) and the request counts' flush into prometheus-client."""

from __future__ import annotations

import json
import logging
import logging.config
import sys
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, Histogram

from controlplane_adapters.operations.logs import REQUEST_ID, JsonFormatter, TextFormatter, logging_config, scrub
from controlplane_adapters.operations.metrics import REGISTRY, LatencyHistogram
from controlplane_adapters.operations.request_counts import LATENCY_BUCKETS, RequestStats

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Authorization: Bearer abc.def-ghi", "abc.def-ghi"),
        ("(b'authorization', b'bearer cpk_1234_secretpart')", "cpk_1234_secretpart"),
        (f"token={JWT}&x=1", JWT),
        ("signing secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
        ("the configured key is s3cr3t-value!", "s3cr3t-value!"),
    ],
)
def test_credentials_are_scrubbed_from_a_line(text: str, secret: str) -> None:
    cleaned = scrub(text, ["s3cr3t-value!"])
    assert secret not in cleaned
    assert "[REDACTED]" in cleaned


def record(message: str, *args: object, name: str = "controlplane.test", exc: bool = False) -> logging.LogRecord:
    info = None
    if exc:
        try:
            raise RuntimeError("failed with key configured-secret-1")
        except RuntimeError:
            info = sys.exc_info()
    return logging.LogRecord(name, logging.INFO, __file__, 1, message, args, info)


def test_a_json_line_carries_the_request_id_and_scrubs_even_the_traceback() -> None:
    formatter = JsonFormatter(secrets=["configured-secret-1"])
    token = REQUEST_ID.set("req-123")
    try:
        line = json.loads(formatter.format(record("called with %s", "Bearer cpk_a_b", exc=True)))
    finally:
        REQUEST_ID.reset(token)
    assert line["request_id"] == "req-123"
    assert (line["level"], line["logger"], line["message"]) == (
        "INFO",
        "controlplane.test",
        "called with Bearer [REDACTED]",
    )
    assert "RuntimeError" in line["exception"]
    assert "configured-secret-1" not in line["exception"]
    outside = json.loads(formatter.format(record("no request")))
    assert outside["request_id"] is None
    assert set(outside) == {"time", "level", "logger", "message", "request_id"}


def test_an_access_line_has_its_fields() -> None:
    access = record(
        '%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/api/v1/agents?x=1", "1.1", 200, name="uvicorn.access"
    )
    line = json.loads(JsonFormatter().format(access))
    assert (line["method"], line["path"], line["status"]) == ("GET", "/api/v1/agents?x=1", 200)


def test_a_text_line_names_its_request() -> None:
    formatter = TextFormatter()
    token = REQUEST_ID.set("req-9")
    try:
        assert "[req-9]: hello" in formatter.format(record("hello"))
    finally:
        REQUEST_ID.reset(token)
    assert "[-]: hello" in formatter.format(record("hello"))


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_every_logger_writes_through_the_one_formatter(
    restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    logging.config.dictConfig(logging_config("json", "info", ["hunter2-secret"]))
    for name in ("controlplane.http", "uvicorn.error", "alembic.runtime.migration"):
        logging.getLogger(name).warning("value hunter2-secret from %s", name)
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [line["logger"] for line in lines] == ["controlplane.http", "uvicorn.error", "alembic.runtime.migration"]
    assert all("hunter2-secret" not in line["message"] for line in lines)


def test_a_flush_adds_what_observe_would_have() -> None:
    """The flush adds a bucket's worth at once to counters (one call a bucket, not a call a request), exposed as a
    histogram at scrape: it must read as `observe()` of the same values would."""
    seconds = [0.0004, 0.001, 0.003, 0.003, 0.2, 7.0, 42.0]
    reference = Histogram(
        "reference_seconds", "", ["method", "route"], buckets=LATENCY_BUCKETS, registry=CollectorRegistry()
    )
    for value in seconds:
        reference.labels("GET", "/flush-check").observe(value)
    stats = RequestStats()
    for value in seconds:
        stats.record("GET", "/flush-check", 200, value)

    def flushed() -> dict[str, float]:
        return {
            sample.name.replace("controlplane_http_request_duration_seconds", "x")
            + sample.labels.get("le", ""): sample.value
            for metric in LatencyHistogram(REGISTRY).collect()
            if metric.name == "controlplane_http_request_duration_seconds"
            for sample in metric.samples
            if sample.labels.get("route") == "/flush-check" and not sample.name.endswith("_created")
        }

    before = flushed()
    stats.flush()
    after = flushed()
    expected = {
        sample.name.replace("reference_seconds", "x") + sample.labels.get("le", ""): sample.value
        for metric in reference.collect()
        for sample in metric.samples
        if not sample.name.endswith("_created")
    }
    assert {key: after[key] - before.get(key, 0.0) for key in after} == pytest.approx(expected)


def test_the_latency_histogram_replaces_its_counters_in_the_exposition() -> None:
    stats = RequestStats()
    stats.record("GET", "/exposed-check", 200, 0.002)
    stats.flush()
    families = {metric.name: metric.type for metric in LatencyHistogram(REGISTRY).collect()}
    assert families["controlplane_http_request_duration_seconds"] == "histogram"
    assert not [name for name in families if name.endswith(("_observations", "_summed"))]
