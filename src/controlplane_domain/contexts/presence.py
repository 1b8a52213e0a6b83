"""Which organizations have no context at all, as this node last saw: an execute there skips its contexts' read."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controlplane_domain.ports import EventBus

CHANGED = "contexts:changed"
"""Published (on every node, through the event bus) after a context is set or removed."""
MAX_REMEMBERED = 10_000


class ContextPresence:
    """Remembers, per organization, whether it has any context. An execute in an organization known to have none
    skips the read of the contexts that apply to it. Any change of a
    context, on this node or another, forgets everything before the next use; a read in flight when a change
    arrived is not remembered (`_generation` counts the changes seen), as the API keys' cache does. Between a
    change on another node and its notification (milliseconds), an execute here may still skip a new context."""

    def __init__(self, bus: EventBus) -> None:
        self._changes = bus.subscribe(CHANGED)
        self._has_any: dict[str, bool] = {}
        self._generation = 0

    def _forget_if_changed(self) -> None:
        if self._changes.take():
            self._has_any.clear()
            self._generation += 1

    def known_empty(self, organization_id: str) -> bool:
        """True when the organization had no context at all when last read, and nothing changed since."""
        self._forget_if_changed()
        return self._has_any.get(organization_id) is False

    def knows(self, organization_id: str) -> bool:
        return organization_id in self._has_any

    @property
    def generation(self) -> int:
        self._forget_if_changed()
        return self._generation

    def learned(self, organization_id: str, generation: int, has_any: bool) -> None:
        """What a read begun at `generation` found; kept only when no change arrived meanwhile."""
        self._forget_if_changed()
        if generation != self._generation:
            return
        if len(self._has_any) >= MAX_REMEMBERED:
            self._has_any.clear()
        self._has_any[organization_id] = has_any
