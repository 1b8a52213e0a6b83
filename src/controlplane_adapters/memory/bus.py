"""In-process event bus: wakes the waiters of a topic on this node (no data travels, only the wake-up)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict


class LocalSubscription:
    def __init__(self, bus: LocalEventBus, topic: str) -> None:
        self._bus = bus
        self._topic = topic
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()

    async def wait(self, seconds: float) -> bool:
        """True when the topic was published since the last wait; False after `seconds` of silence."""
        if not self._event.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._event.wait(), timeout=max(0.0, seconds))
        woke = self._event.is_set()
        self._event.clear()
        return woke

    def take(self) -> bool:
        woke = self._event.is_set()
        self._event.clear()
        return woke

    def close(self) -> None:
        self._bus.unsubscribe(self._topic, self)


class LocalEventBus:
    """Topic -> subscriptions; `publish` wakes every subscription of the topic on this process."""

    def __init__(self) -> None:
        self._subscriptions: dict[str, set[LocalSubscription]] = defaultdict(set)

    async def publish(self, topic: str) -> None:
        self.deliver(topic)

    def deliver(self, topic: str) -> None:
        for subscription in list(self._subscriptions.get(topic, ())):
            subscription.notify()

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
