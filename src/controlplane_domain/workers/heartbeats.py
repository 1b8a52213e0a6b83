"""Write-behind heartbeats: the latest report of each worker, kept until a flush writes them all at once.

A worker that reports nothing new except that it is alive does not need a transaction of its own: its report
waits here, answers reads of the worker at once, and is written with every other waiting report in one
transaction by the next flush (the service flushes every half second, so last-seen in the database is never
more than a second behind). A registration or a lease that needs renewing is written through instead.

A flush takes the waiting reports and writes them; until its transaction has ended they still answer reads (they
are "in flight"): a read in between would otherwise find them neither here nor, not yet committed, in the
store, and answer the worker as it was before its report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from controlplane_domain.workers.entity import Worker

Key = tuple[str, str]


class HeartbeatBuffer:
    """Reports not yet written, keyed by (organization, worker id); plain memory, no I/O."""

    __slots__ = ("_flushing", "_pending")

    def __init__(self) -> None:
        self._pending: dict[Key, Worker] = {}
        self._flushing: dict[Key, Worker] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def latest(self, organization_id: str, worker_id: str) -> Worker | None:
        """The worker as last reported, when that report is not written yet (waiting, or in a flush)."""
        key = (organization_id, worker_id)
        return self._pending.get(key) or self._flushing.get(key)

    def hold(self, worker: Worker) -> None:
        """Keep `worker` as the report to write (replacing an older one of the same worker)."""
        key = (worker.organization_id, worker.worker_id)
        known = self._pending.get(key)
        if known is None or known.last_heartbeat_at <= worker.last_heartbeat_at:
            self._pending[key] = worker

    def written(self, worker: Worker) -> None:
        """`worker` was written through: a waiting (or in-flight) report it supersedes is dropped."""
        key = (worker.organization_id, worker.worker_id)
        for reports in (self._pending, self._flushing):
            known = reports.get(key)
            if known is not None and known.last_heartbeat_at <= worker.last_heartbeat_at:
                del reports[key]

    def move_to_queue(self, organization_id: str, worker_id: str, queue_id: str) -> None:
        """The worker polls another queue now (a lease wrote it): a waiting report must not undo that."""
        known = self._pending.get((organization_id, worker_id))
        if known is not None and known.queue_id != queue_id:
            self._pending[(organization_id, worker_id)] = replace(known, queue_id=queue_id)

    def drain(self) -> list[Worker]:
        """Every waiting report, now in flight: the caller writes them, or `restore`s them when it cannot, then
        `settle`s them (they answer reads until then)."""
        drained, self._pending = self._pending, {}
        self._flushing.update(drained)
        return list(drained.values())

    def restore(self, workers: Iterable[Worker]) -> None:
        """Put back reports a flush could not write, unless a newer report of the same worker arrived."""
        for worker in workers:
            self._pending.setdefault((worker.organization_id, worker.worker_id), worker)

    def settle(self, workers: Iterable[Worker]) -> None:
        """The flush of `workers` has ended (written, refused or given back): they are no longer in flight."""
        for worker in workers:
            key = (worker.organization_id, worker.worker_id)
            if self._flushing.get(key) is worker:
                del self._flushing[key]

    def snapshot(self) -> dict[Key, Worker]:
        """The reports not written yet, as of now (for `overlay`'s `earlier`)."""
        return {**self._flushing, **self._pending} if self._pending or self._flushing else {}

    def overlay(self, workers: list[Worker], earlier: Mapping[Key, Worker] | None = None) -> list[Worker]:
        """`workers` as read from the store, each replaced by its report not written yet when there is one.

        `earlier` is a `snapshot` taken before the store was read: a report a flush wrote and settled while the
        read was under way is in neither the buffer nor, when the read began first, the rows; it answers for
        its worker when it is newer than the row read."""
        if not self._pending and not self._flushing and not earlier:
            return workers
        return [self.newest(w, (earlier or {}).get((w.organization_id, w.worker_id))) for w in workers]

    def newest(self, stored: Worker, earlier: Worker | None = None) -> Worker:
        """The worker read from the store, or its report not written yet: in the buffer now, or seen in it before
        the read (`earlier`) when newer than the row."""
        waiting = self.latest(stored.organization_id, stored.worker_id)
        if waiting is not None:
            return waiting
        if earlier is not None and earlier.last_heartbeat_at > stored.last_heartbeat_at:
            return earlier
        return stored
