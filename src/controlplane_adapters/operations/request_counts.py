"""The requests' counts on the hot path, without prometheus-client: `RequestStats.record` costs a dict lookup and
a `bisect` (prometheus-client's own `inc()` and `observe()` take a lock each, and in multiprocess mode write
memory-mapped files: docs/benchmarks.md, "Operations").

`flush()` moves the counts into prometheus-client's counters (metrics.py), which is imported then: at the first
scrape of `GET /metrics` in the process that answers it, or, under `serve --workers N` (multiprocess mode,
`PROMETHEUS_MULTIPROC_DIR`), at the first flush after a request (every FLUSH_SECONDS). A server nobody scrapes
never loads prometheus-client (docs/benchmarks.md, "Idle memory of `serve`")."""

from __future__ import annotations

import bisect
import os

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
FLUSH_SECONDS = 1.0
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BOUNDS = (*LATENCY_BUCKETS, float("inf"))
UNMATCHED = "unmatched"  # the route label of a request no route matches

Pending = dict[tuple[str, str, int], list[float]]
"""(method, route, status) -> [count, sum of seconds, then a count per bucket of `BOUNDS`]"""


class RequestStats:
    """Requests counted in plain dicts on the hot path, moved into prometheus-client's counters by `flush()`."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: Pending = {}

    def record(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, status)
        entry = self._pending.get(key)
        if entry is None:
            entry = self._pending[key] = [0.0] * (len(BOUNDS) + 2)
        entry[0] += 1
        entry[1] += seconds
        entry[2 + bisect.bisect_left(BOUNDS, seconds)] += 1

    def flush(self) -> None:
        """Add what was counted since the last flush to prometheus-client's objects (in multiprocess mode, this
        process's files)."""
        pending, self._pending = self._pending, {}
        if pending:
            from controlplane_adapters.operations.metrics import add_requests

            add_requests(pending)


STATS = RequestStats()


def multiprocess_mode() -> bool:
    return bool(os.environ.get(MULTIPROCESS_ENV))
