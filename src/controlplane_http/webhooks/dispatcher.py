"""The webhook dispatcher: every node runs one (started with the server, like the job scheduler). It delivers what
is due (controlplane_domain/webhooks/delivery.py), goes on at once while there is more, and otherwise waits for a
commit that wrote deliveries (`webhooks:due` on the event bus, from any node) or for its interval (retries)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable

from controlplane_domain.errors import DomainError
from controlplane_domain.ports import Ports, Subscription
from controlplane_domain.webhooks.delivery import OnAttempt, deliver_due
from controlplane_domain.webhooks.listeners import DUE

log = logging.getLogger("controlplane.webhooks")


class WebhookDispatcher:
    """`on_attempt`: called with each attempt's `Attempted` (outcome, delivery as settled): the metrics' hook."""

    name = "webhook dispatcher"

    def __init__(
        self,
        ports: Ports,
        *,
        interval_seconds: float = 1.0,
        on_attempt: OnAttempt | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self._ports = ports
        self.interval_seconds = interval_seconds
        self.on_attempt = on_attempt
        self._jitter = jitter
        self._task: asyncio.Task[None] | None = None
        self._due: Subscription | None = None

    async def start(self) -> None:
        if self._ports.bus is not None:
            self._due = self._ports.bus.subscribe(DUE)
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._due is not None:
            self._due.close()
            self._due = None
        close = getattr(self._ports.webhook_sender, "close", None)
        if close is not None:
            await close()

    async def round(self) -> int:
        """One round (tests call it): how many deliveries were attempted."""
        return await deliver_due(self._ports, jitter=self._jitter, on_attempt=self.on_attempt)

    async def _run(self) -> None:
        while True:
            attempted = 0
            try:
                attempted = await self.round()
            except DomainError:
                log.warning("%s could not run (database unavailable?)", self.name, exc_info=True)
            except Exception:  # keep the task alive whatever happens; the failure is logged
                log.exception("%s failed", self.name)
            if attempted:
                continue  # the next deliveries of these webhooks may be due now
            if self._due is not None:
                await self._due.wait(self.interval_seconds)
            else:
                await asyncio.sleep(self.interval_seconds)
