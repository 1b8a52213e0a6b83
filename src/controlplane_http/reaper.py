"""The lease reaper: a background task that re-queues (or fails) executions whose worker went silent."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from controlplane_domain.errors import DomainError
from controlplane_domain.ports import Ports
from controlplane_domain.usecases.executions import reap_expired_leases

log = logging.getLogger("controlplane.reaper")


class LeaseReaper:
    """Every `interval_seconds`, handles expired leases (safe on several nodes: rows are locked, skipped)."""

    def __init__(self, ports: Ports, interval_seconds: float) -> None:
        self.ports = ports
        self.interval_seconds = interval_seconds
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="lease-reaper")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            try:
                while await reap_expired_leases(self.ports) >= 100:
                    pass
            except DomainError:
                log.warning("lease reaper could not run (database unavailable?)", exc_info=True)
            except Exception:  # keep the reaper alive whatever happens; the failure is logged
                log.exception("lease reaper failed")
            await asyncio.sleep(self.interval_seconds)
