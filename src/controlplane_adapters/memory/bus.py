"""In-process event bus: wakes the waiters of a topic on this node (no data travels, only the wake-up)."""

from __future__ import annotations

import asyncio
from collections import defaultdict


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class LocalSubscription:
    """A flag and, while someone waits, a future: `wait` costs one future and one timer (no task, no Event),
    which matters when one event wakes a thousand streams. One waiter at a time (each stream or long poll
    subscribes for itself)."""

    __slots__ = ("_bus", "_published", "_topic", "_waiter")

    def __init__(self, bus: LocalEventBus, topic: str) -> None:
        self._bus = bus
        self._topic = topic
        self._published = False
        self._waiter: asyncio.Future[None] | None = None

    def notify(self) -> None:
        self._published = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, seconds: float) -> bool:
        """True when the topic was published since the last wait; False after `seconds` of silence."""
        if not self._published:
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = loop.call_later(max(0.0, seconds), _expire, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = None
        woke = self._published
        self._published = False
        return woke

    def take(self) -> bool:
        woke = self._published
        self._published = False
        return woke

    def close(self) -> None:
        self._bus.unsubscribe(self._topic, self)


class LocalEventBus:
    """Topic -> subscriptions; `publish` wakes every subscription of the topic on this process."""

    def __init__(self) -> None:
        self._subscriptions: dict[str, set[LocalSubscription]] = defaultdict(set)

    async def publish(self, *topics: str) -> None:
        if sum(self.deliver(topic) for topic in topics):
            await asyncio.sleep(0)  # the woken waiters run before the publisher goes on (see PostgresEventBus)

    def deliver(self, topic: str) -> int:
        """Wake the topic's subscriptions; how many there were."""
        subscriptions = self._subscriptions.get(topic)
        if not subscriptions:
            return 0
        for subscription in list(subscriptions):
            subscription.notify()
        return len(subscriptions)

    def deliver_all(self) -> None:
        for topic in list(self._subscriptions):
            self.deliver(topic)

    def subscribe(self, topic: str) -> LocalSubscription:
        subscription = LocalSubscription(self, topic)
        self._subscriptions[topic].add(subscription)
        return subscription

    def unsubscribe(self, topic: str, subscription: LocalSubscription) -> None:
        subscribers = self._subscriptions.get(topic)
        if subscribers is not None:
            subscribers.discard(subscription)
            if not subscribers:
                del self._subscriptions[topic]

    @property
    def topics(self) -> int:
        return len(self._subscriptions)
