"""What a node holds for the policies: the engine, the compiled policies' cache and the decisions not written yet."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from controlplane_domain.policies.cache import PolicyCache
from controlplane_domain.policies.log import DecisionLog
from controlplane_domain.policies.ports import PolicyEngine

if TYPE_CHECKING:
    from controlplane_domain.ports import EventBus, UnitOfWork


class PolicyRuntime:
    """Wired once per node (`Ports.policies`); the cache needs the bus that carries `cache.CHANGED` to every node
    (without one, every guarded action reads its organization's policies)."""

    __slots__ = ("cache", "engine", "log")

    def __init__(self, engine: PolicyEngine, bus: EventBus | None) -> None:
        self.engine = engine
        self.cache = PolicyCache(engine, bus)
        self.log = DecisionLog()

    async def flush(self, uow: Callable[[], UnitOfWork]) -> int:
        """Write every decision waiting in the log, and the audit event of each denial, in one transaction; how
        many. On a failure they wait for the next flush (the service flushes every quarter second and at stop, and
        before a read of either log: `Ports.policies` is how the audit log reaches this)."""
        if not len(self.log):
            return 0
        decisions = self.log.drain()
        denials = self.log.drain_denials()
        try:
            async with uow() as work:
                await work.policy_decisions.add_many(decisions)
                for event in denials:  # the audit log's record of each refused action (audit/usecases.py)
                    await work.audit_events.add(event)
                await work.commit()
        except BaseException:
            self.log.restore(decisions)
            self.log.restore_denials(denials)
            raise
        return len(decisions) + len(denials)
