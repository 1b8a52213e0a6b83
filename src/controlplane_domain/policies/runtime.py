"""What a node holds for the policies: the engine, the compiled policies' cache and the decisions not written yet."""

from __future__ import annotations

from typing import TYPE_CHECKING

from controlplane_domain.policies.cache import PolicyCache
from controlplane_domain.policies.log import DecisionLog
from controlplane_domain.policies.ports import PolicyEngine

if TYPE_CHECKING:
    from controlplane_domain.ports import EventBus


class PolicyRuntime:
    """Wired once per node (`Ports.policies`); the cache needs the bus that carries `cache.CHANGED` to every node
    (without one, every guarded action reads its organization's policies)."""

    __slots__ = ("cache", "engine", "log")

    def __init__(self, engine: PolicyEngine, bus: EventBus | None) -> None:
        self.engine = engine
        self.cache = PolicyCache(engine, bus)
        self.log = DecisionLog()
