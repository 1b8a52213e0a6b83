"""Background tasks of the service: the lease reaper, the heartbeat flusher, the job scheduler, the workflow
steps' timeout sweep and the idempotency purge."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from controlplane_domain.errors import DomainError
from controlplane_domain.executions.lease_ends import reap_expired_leases
from controlplane_domain.idempotency.usecases import PURGE_BATCH, purge_expired_idempotency_records
from controlplane_domain.jobs.firing import fire_due_round
from controlplane_domain.policies.usecases import flush_decisions
from controlplane_domain.ports import Ports
from controlplane_domain.workers.flushing import flush_heartbeats
from controlplane_domain.workers.usecases import mark_silent_workers
from controlplane_domain.workflows.timeouts import time_out_steps

log = logging.getLogger("controlplane.background")


class Periodic:
    """Runs `once` every `interval_seconds` in its own task, from start to stop; `once` runs a last time at
    stop when `at_stop` is set. A failure is logged and the task goes on."""

    def __init__(
        self,
        name: str,
        interval_seconds: float,
        once: Callable[[], Awaitable[object]],
        *,
        at_stop: bool = False,
        at_start: bool = True,
    ) -> None:
        self.name = name
        self.interval_seconds = interval_seconds
        self._once = once
        self._at_stop = at_stop
        self._at_start = at_start  # False: the first run waits an interval (it stays out of the start-up's way)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._at_stop:
            await self._run_once()

    async def _run(self) -> None:
        if not self._at_start:
            await asyncio.sleep(self.interval_seconds)
        while True:
            await self._run_once()
            await asyncio.sleep(self.interval_seconds)

    async def _run_once(self) -> None:
        try:
            await self._once()
        except DomainError:
            log.warning("%s could not run (database unavailable?)", self.name, exc_info=True)
        except Exception:  # keep the task alive whatever happens; the failure is logged
            log.exception("%s failed", self.name)


def lease_reaper(ports: Ports, interval_seconds: float) -> Periodic:
    """Re-queues (or fails) executions whose worker went silent; safe on several nodes (rows are locked, skipped).
    Then stores `offline` for the workers that fell silent (their `worker.status_changed`), once across nodes."""

    async def reap() -> None:
        while await reap_expired_leases(ports) >= 100:
            pass
        await mark_silent_workers(ports)

    return Periodic("lease reaper", interval_seconds, reap)


def heartbeat_flusher(ports: Ports, interval_seconds: float, batch: int | None = None) -> Periodic:
    """Writes the heartbeats waiting in `ports.heartbeats` (in one transaction, or in transactions of `batch`:
    `flush_heartbeats`), and once more at shutdown."""
    return Periodic("heartbeat flusher", interval_seconds, lambda: flush_heartbeats(ports, batch), at_stop=True)


DECISION_LULL_SECONDS = 0.05


def decision_flusher(ports: Ports, interval_seconds: float = 0.25) -> Periodic:
    """Writes the policy decisions waiting in `ports.policies.log` in one transaction, and once more at shutdown.
    Each time, it first waits (up to DECISION_LULL_SECONDS) for no policy evaluation to be pending: a flush of a
    quarter second's decisions holds a SQLite store's event loop for milliseconds, which an execute waiting for its
    policies' answer would otherwise pay (docs/benchmarks.md, "Policies")."""

    async def flush() -> None:
        if ports.policies is not None:
            await ports.policies.lull(DECISION_LULL_SECONDS)
        await flush_decisions(ports)

    return Periodic("policy decision flusher", interval_seconds, flush, at_stop=True)


def job_scheduler(ports: Ports, interval_seconds: float) -> Periodic:
    """Fires the due cron firings of every organization's jobs; every node runs one, and each firing happens once
    (claimed by a compare-and-set of the job's `next_run_at`, see jobs/firing.py). A round that may have left due
    firings goes on at once; its rounds are fair between organizations (jobs/firing.py `fire_due_round`)."""

    async def tick() -> None:
        while (await fire_due_round(ports)).more:
            pass

    return Periodic("job scheduler", interval_seconds, tick)


SWEEPS_A_TICK = 100


def step_timeouts(ports: Ports, interval_seconds: float) -> Periodic:
    """Times out the workflow steps' executions that ran past their step's `timeout_seconds`; every node runs one,
    and each run is checked by one node at a time (a compare-and-set of its next check, see workflows/timeouts.py).
    A sweep that may have left due runs goes on at once (at most SWEEPS_A_TICK of them: a run whose check cannot
    move is read again by each); its sweeps are fair between organizations."""

    async def sweep() -> None:
        for _ in range(SWEEPS_A_TICK):
            if not (await time_out_steps(ports)).more:
                break

    return Periodic("step timeouts", interval_seconds, sweep)


PURGE_PAUSE_SECONDS = 0.01


def idempotency_purger(ports: Ports, interval_seconds: float = 60.0) -> Periodic:
    """Deletes the recorded Idempotency-Key answers older than their 24 hours, a thousand at a time, with a pause
    between batches: on SQLite a batch runs in the event loop's own thread, and a backlog deleted in one go (the
    first run after an upgrade) held every request for seconds. Its first run waits an interval."""

    return Periodic("idempotency purge", interval_seconds, lambda: purge_expired(ports), at_start=False)


async def purge_expired(ports: Ports) -> int:
    """Every expired answer, a batch at a time with a pause between batches; how many were deleted."""
    deleted = 0
    while True:
        batch = await purge_expired_idempotency_records(ports)
        deleted += batch
        if batch < PURGE_BATCH:
            return deleted
        await asyncio.sleep(PURGE_PAUSE_SECONDS)  # the requests waiting meanwhile go first
