"""The webhook dispatcher: every node runs one (started with the server, like the job scheduler). It keeps a fixed
number of send slots fed: whenever a slot is free it leases due deliveries (controlplane_domain/webhooks/
delivery.py; at most `per_organization` of one organization in flight at once, across nodes), and sends and
settles each on its own, so that no delivery waits for another's receiver. A send ends within its deadline (the
sender's); a slot that frees, a commit that wrote deliveries (`webhooks:due` on the event bus, from any node) or
the interval (retries) wakes the dispatcher to lease more."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable

from controlplane_domain.errors import DomainError
from controlplane_domain.ports import Ports, Subscription
from controlplane_domain.webhooks.delivery import (
    CLAIM_BATCH,
    ORGANIZATION_CONCURRENCY,
    OnAttempt,
    attempt,
    claim,
    deliver_due,
)
from controlplane_domain.webhooks.entity import Delivery, Webhook
from controlplane_domain.webhooks.listeners import DUE

log = logging.getLogger("controlplane.webhooks")


class WebhookDispatcher:
    """`on_attempt`: called with each attempt's `Attempted` (outcome, delivery as settled): the metrics' hook.
    `slots`: deliveries in flight at once on this node; `per_organization`: of one organization, across nodes."""

    name = "webhook dispatcher"

    def __init__(
        self,
        ports: Ports,
        *,
        interval_seconds: float = 1.0,
        on_attempt: OnAttempt | None = None,
        jitter: Callable[[], float] = random.random,
        slots: int = CLAIM_BATCH,
        per_organization: int = ORGANIZATION_CONCURRENCY,
    ) -> None:
        self._ports = ports
        self.interval_seconds = interval_seconds
        self.on_attempt = on_attempt
        self.slots = slots
        self.per_organization = per_organization
        self._jitter = jitter
        self._task: asyncio.Task[None] | None = None
        self._forward: asyncio.Task[None] | None = None
        self._due: Subscription | None = None
        self._wake: asyncio.Event | None = None
        self._sending: set[asyncio.Task[None]] = set()

    @property
    def in_flight(self) -> int:
        """Deliveries being sent now (each holds a slot until it is settled)."""
        return len(self._sending)

    async def start(self) -> None:
        self._wake = asyncio.Event()
        if self._ports.bus is not None:
            self._due = self._ports.bus.subscribe(DUE)
            self._forward = asyncio.create_task(self._forward_due(self._due, self._wake), name=f"{self.name} (due)")
        self._task = asyncio.create_task(self._run(self._wake), name=self.name)

    async def stop(self) -> None:
        """Stop leasing, and cut the sends in flight short: their leases run out and another node (or this one,
        started again) sends them again."""
        tasks = [task for task in (self._task, self._forward) if task is not None] + list(self._sending)
        self._task = self._forward = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._due is not None:
            self._due.close()
            self._due = None
        close = getattr(self._ports.webhook_sender, "close", None)
        if close is not None:
            await close()

    async def round(self) -> int:
        """One round (tests call it): lease what is due, up to the slots, send it all and wait for every send to
        be settled; how many deliveries were attempted."""
        return await deliver_due(
            self._ports,
            jitter=self._jitter,
            on_attempt=self.on_attempt,
            limit=self.slots,
            per_organization=self.per_organization,
        )

    async def _forward_due(self, due: Subscription, wake: asyncio.Event) -> None:
        while True:
            if await due.wait(3600.0):
                wake.set()

    async def _run(self, wake: asyncio.Event) -> None:
        while True:
            wake.clear()  # (a slot freed or a commit from now on wakes the wait below)
            free = self.slots - len(self._sending)
            if free > 0:
                try:
                    for delivery, webhook in await claim(self._ports, free, self.per_organization):
                        self._send(delivery, webhook, wake)
                except DomainError:
                    log.warning("%s could not run (database unavailable?)", self.name, exc_info=True)
                except Exception:  # keep the task alive whatever happens; the failure is logged
                    log.exception("%s failed", self.name)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), self.interval_seconds)

    def _send(self, delivery: Delivery, webhook: Webhook, wake: asyncio.Event) -> None:
        task = asyncio.create_task(self._deliver(delivery, webhook), name=f"{self.name}: {delivery.id}")
        self._sending.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self._sending.discard(finished)
            wake.set()  # a free slot, and maybe the webhook's next delivery is due now

        task.add_done_callback(done)

    async def _deliver(self, delivery: Delivery, webhook: Webhook) -> None:
        try:
            attempted = await attempt(self._ports, delivery, webhook, jitter=self._jitter)
        except DomainError:
            log.warning("%s could not settle delivery %s (database unavailable?)", self.name, delivery.id,
                        exc_info=True)  # fmt: skip
            return
        except Exception:
            log.exception("%s failed to deliver %s", self.name, delivery.id)
            return
        if attempted is not None and self.on_attempt is not None:
            self.on_attempt(attempted)
