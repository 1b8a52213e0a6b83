"""Prometheus metrics: the service's counters and histograms, the gauges read at scrape, and their exposition.

A request costs a dict lookup and a `bisect` (request_counts.py, which does not import this module: a server
nobody scrapes never loads prometheus-client). The counts are moved into prometheus-client's counters by
`RequestStats.flush()` (`add_requests`): before every scrape in the process that answers it, and, under
`serve --workers N` (multiprocess mode, `PROMETHEUS_MULTIPROC_DIR`), every second in every process
(`FLUSH_SECONDS`) and at its stop. The counters are made when this module is first imported (their `_created`
series say so: the first scrape, flush or webhook delivery, not the process's start). The latency histogram is
kept as two counters (observations by bucket, seconds summed: a flush adds a bucket's worth at once, which
`Histogram.observe()` cannot) and exposed as the histogram `controlplane_http_request_duration_seconds` by
`LatencyHistogram` at scrape, every process's counts summed first in multiprocess mode.

The gauges (live executions, queue depth and age, workers by status, scheduler lag) are not counted as things
happen: they are read from the database when scraped (`controlplane_domain.operations.usecases.read_gauges`), so
they are the same whichever process answers and cost the hot paths nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from controlplane_adapters.operations.request_counts import BOUNDS, STATS, Pending, multiprocess_mode
from controlplane_domain.operations.entity import FleetGauges

CONTENT_TYPE = CONTENT_TYPE_LATEST
"""The exposition's media type (prometheus-client's text format)."""
# each bucket's `le` as Histogram writes it: "0.001", "1.0", "+Inf"
_BOUND_LABELS = tuple("+Inf" if bound == float("inf") else repr(bound) for bound in BOUNDS)

REGISTRY = CollectorRegistry(auto_describe=True)
REQUESTS = Counter(
    "controlplane_http_requests",
    "HTTP requests answered, by method, route template and status",
    ["method", "route", "status"],
    registry=REGISTRY,
)
LATENCY_NAME = "controlplane_http_request_duration_seconds"
LATENCY_HELP = "Time from a request's arrival to its response's headers, by method and route template"
# The histogram's parts (see the module's docstring): observations by bucket (not cumulative), and seconds summed
OBSERVATIONS_NAME = f"{LATENCY_NAME}_observations"
SUMMED_NAME = f"{LATENCY_NAME}_summed"
LATENCY_OBSERVATIONS = Counter(
    OBSERVATIONS_NAME,
    "Requests by latency bucket (exposed as the histogram's buckets)",
    ["method", "route", "le"],
    registry=REGISTRY,
)
LATENCY_SECONDS = Counter(
    SUMMED_NAME,
    "Seconds of requests summed (exposed as the histogram's sum)",
    ["method", "route"],
    registry=REGISTRY,
)
WEBHOOK_DELIVERIES = Counter(
    "controlplane_webhook_deliveries",
    "Webhook delivery attempts, by outcome (delivered, failed)",
    ["outcome"],
    registry=REGISTRY,
)
WEBHOOK_FAILURES = Counter(
    "controlplane_webhook_delivery_failures",
    "Failed webhook delivery attempts, by reason",
    ["reason"],
    registry=REGISTRY,
)
WEBHOOK_REASONS = ("status", "timeout", "connection", "refused_address", "other")
for _outcome in ("delivered", "failed"):  # present at 0 from the start
    WEBHOOK_DELIVERIES.labels(_outcome)
for _reason in WEBHOOK_REASONS:
    WEBHOOK_FAILURES.labels(_reason)


def record_webhook_delivery(delivered: bool, reason: str | None = None) -> None:
    """Count one webhook delivery attempt; a failed one with its reason (`WEBHOOK_REASONS`; any other is `other`).

    For the webhooks' delivery code (not a hot path: it writes prometheus-client's objects directly)."""
    WEBHOOK_DELIVERIES.labels("delivered" if delivered else "failed").inc()
    if not delivered:
        WEBHOOK_FAILURES.labels(reason if reason in WEBHOOK_REASONS else "other").inc()


def add_requests(pending: Pending) -> None:
    """Add the requests counted since the last flush (`RequestStats.flush`) to prometheus-client's counters."""
    for (method, route, status), entry in pending.items():
        REQUESTS.labels(method, route, str(status)).inc(entry[0])
        LATENCY_SECONDS.labels(method, route).inc(entry[1])
        for index, count in enumerate(entry[2:]):
            if count:
                LATENCY_OBSERVATIONS.labels(method, route, _BOUND_LABELS[index]).inc(count)


class GaugesCollector(Collector):
    """The gauges read from the database for one scrape."""

    def __init__(self, gauges: FleetGauges) -> None:
        self.gauges = gauges

    def collect(self) -> Iterator[GaugeMetricFamily]:
        gauges = self.gauges
        executions = GaugeMetricFamily(
            "controlplane_executions", "Executions queued, running or waiting for input", labels=["status"]
        )
        for status, count in gauges.executions.items():
            executions.add_metric([status], count)
        yield executions
        depth = GaugeMetricFamily(
            "controlplane_queue_depth",
            "Queued executions of each worker queue that has any",
            labels=["organization_id", "worker_queue_id"],
        )
        age = GaugeMetricFamily(
            "controlplane_queue_oldest_age_seconds",
            "How long the oldest queued execution of each worker queue has waited",
            labels=["organization_id", "worker_queue_id"],
        )
        for backlog in gauges.queues:
            labels = [backlog.organization_id, backlog.worker_queue_id]
            depth.add_metric(labels, backlog.depth)
            waited = 0.0
            if backlog.oldest_queued_at is not None and gauges.now is not None:
                waited = max(0.0, (gauges.now - backlog.oldest_queued_at).total_seconds())
            age.add_metric(labels, waited)
        yield depth
        yield age
        workers = GaugeMetricFamily(
            "controlplane_workers", "Workers by status (offline after three missed heartbeats)", labels=["status"]
        )
        for status, count in gauges.workers.items():
            workers.add_metric([status], count)
        yield workers
        yield GaugeMetricFamily(
            "controlplane_scheduler_lag_seconds",
            "How far past its time the earliest due job firing not yet fired is (0 when none is due)",
            value=gauges.scheduler_lag_seconds,
        )


def exposition(gauges: FleetGauges) -> bytes:
    """The scrape's answer in Prometheus' text format: this process's counts (every process's in multiprocess
    mode) and the gauges."""
    STATS.flush()
    registry = CollectorRegistry()
    source: Any = REGISTRY
    if multiprocess_mode():
        source = multiprocess.MultiProcessCollector(None)  # type: ignore[no-untyped-call]
    registry.register(LatencyHistogram(source))
    registry.register(GaugesCollector(gauges))
    return generate_latest(registry)


class LatencyHistogram(Collector):
    """The metrics of `source` (a registry, or the multiprocess collector), with the latency histogram made from
    its two counters (`LATENCY_OBSERVATIONS`, `LATENCY_SECONDS`) in their place."""

    def __init__(self, source: Any) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        buckets: dict[tuple[str, str], dict[str, float]] = {}
        sums: dict[tuple[str, str], float] = {}
        for family in self.source.collect():
            if family.name not in (OBSERVATIONS_NAME, SUMMED_NAME):
                yield family
                continue
            for sample in family.samples:
                if not sample.name.endswith("_total"):  # (a counter's `_created`)
                    continue
                key = (sample.labels["method"], sample.labels["route"])
                if family.name == SUMMED_NAME:
                    sums[key] = sums.get(key, 0.0) + sample.value
                else:
                    counts = buckets.setdefault(key, {})
                    counts[sample.labels["le"]] = counts.get(sample.labels["le"], 0.0) + sample.value
        histogram = HistogramMetricFamily(LATENCY_NAME, LATENCY_HELP, labels=["method", "route"])
        for key in sorted(buckets.keys() | sums.keys()):
            counts, cumulative, values = buckets.get(key, {}), 0.0, []
            for label in _BOUND_LABELS:
                cumulative += counts.get(label, 0.0)
                values.append((label, cumulative))
            histogram.add_metric(list(key), values, sums.get(key, 0.0))
        yield histogram


def mark_process_dead() -> None:
    """At a server process's stop in multiprocess mode: flush, and drop its live files (prometheus-client's rule)."""
    if multiprocess_mode():
        STATS.flush()
        multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]
