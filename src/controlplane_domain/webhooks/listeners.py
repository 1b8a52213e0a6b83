"""Which event types each organization's enabled webhooks listen to, as this node last read: an event nobody
listens to is not written at all (the execution's completion, a hot path, then pays a dictionary look-up)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controlplane_domain.ports import EventBus

CHANGED = "webhooks:changed"
"""Published (on every node, through the event bus) after a webhook is created, changed, disabled or deleted."""
DUE = "webhooks:due"
"""Published after a commit that wrote deliveries: every node's dispatcher looks for them at once."""
MAX_REMEMBERED = 10_000


class WebhookListeners:
    """Remembers, per organization, the event types its enabled webhooks listen to. Any change of a webhook, on
    this node or another, forgets everything before the next use; a read in flight when a change arrived is not
    remembered (`generation` counts the changes seen), as contexts/presence.py does. Between a change on another
    node and its notification (milliseconds), an event here may still be written for the webhooks as they were:
    the outbox's insert itself picks the webhooks listening when it runs, so that only an event of a webhook
    created in that window can be missed."""

    def __init__(self, bus: EventBus) -> None:
        self._changes = bus.subscribe(CHANGED)
        self._listened: dict[str, frozenset[str]] = {}
        self._generation = 0

    def _forget_if_changed(self) -> None:
        if self._changes.take():
            self._listened.clear()
            self._generation += 1

    def known(self, organization_id: str) -> frozenset[str] | None:
        """The event types listened to when last read, None when not known (read them, then `learned`)."""
        self._forget_if_changed()
        return self._listened.get(organization_id)

    @property
    def generation(self) -> int:
        self._forget_if_changed()
        return self._generation

    def learned(self, organization_id: str, generation: int, listened: frozenset[str]) -> None:
        """What a read begun at `generation` found; kept only when no change arrived meanwhile."""
        self._forget_if_changed()
        if generation != self._generation:
            return
        if len(self._listened) >= MAX_REMEMBERED:
            self._listened.clear()
        self._listened[organization_id] = listened
