"""Write-behind heartbeats: the latest report of each worker, kept until a flush writes them all at once.

A worker that reports nothing new except that it is alive does not need a transaction of its own: its report
waits here, answers reads of the worker at once, and is written with every other waiting report in one
transaction by the next flush (the service flushes every half second, so last-seen in the database is never
more than a second behind). A registration or a lease that needs renewing is written through instead."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from controlplane_domain.workers.entity import Worker

Key = tuple[str, str]


class HeartbeatBuffer:
    """Reports not yet written, keyed by (organization, worker id); plain memory, no I/O."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: dict[Key, Worker] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def latest(self, organization_id: str, worker_id: str) -> Worker | None:
        """The worker as last reported, when that report is not written yet."""
        return self._pending.get((organization_id, worker_id))

    def hold(self, worker: Worker) -> None:
        """Keep `worker` as the report to write (replacing an older one of the same worker)."""
        key = (worker.organization_id, worker.worker_id)
        known = self._pending.get(key)
        if known is None or known.last_heartbeat_at <= worker.last_heartbeat_at:
            self._pending[key] = worker

    def written(self, worker: Worker) -> None:
        """`worker` was written through: a waiting report it supersedes is dropped."""
        key = (worker.organization_id, worker.worker_id)
        known = self._pending.get(key)
        if known is not None and known.last_heartbeat_at <= worker.last_heartbeat_at:
            del self._pending[key]

    def move_to_queue(self, organization_id: str, worker_id: str, queue_id: str) -> None:
        """The worker polls another queue now (a lease wrote it): a waiting report must not undo that."""
        known = self._pending.get((organization_id, worker_id))
        if known is not None and known.queue_id != queue_id:
            self._pending[(organization_id, worker_id)] = replace(known, queue_id=queue_id)

    def drain(self) -> list[Worker]:
        """Every waiting report, removed: the caller writes them, or `restore`s them when it cannot."""
        drained, self._pending = list(self._pending.values()), {}
        return drained

    def restore(self, workers: Iterable[Worker]) -> None:
        """Put back reports a flush could not write, unless a newer report of the same worker arrived."""
        for worker in workers:
            self._pending.setdefault((worker.organization_id, worker.worker_id), worker)

    def overlay(self, workers: list[Worker]) -> list[Worker]:
        """`workers` as read from the store, each replaced by its waiting report when there is one."""
        if not self._pending:
            return workers
        return [self._pending.get((w.organization_id, w.worker_id), w) for w in workers]
