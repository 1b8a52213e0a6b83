"""What a node holds for the policies: the engine, the compiled policies' cache and the decisions not written yet."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from controlplane_domain.policies.cache import PolicyCache
from controlplane_domain.policies.entity import Outcome
from controlplane_domain.policies.log import DecisionLog
from controlplane_domain.policies.ports import PolicyEngine, PreparedPolicies

if TYPE_CHECKING:
    from controlplane_domain.ports import EventBus, UnitOfWork


class PolicyRuntime:
    """Wired once per node (`Ports.policies`); the cache needs the bus that carries `cache.CHANGED` to every node
    (without one, every guarded action reads its organization's policies).

    It counts the evaluations pending (an engine that evaluates out of process lets the event loop run other work
    while one waits for its answer): the decision log's flush, which may hold a store's event loop for
    milliseconds, waits for a moment with none (`lull`), so that it lands between guarded actions rather than
    inside one's wait."""

    __slots__ = ("_evaluating", "_lull", "_writing", "cache", "engine", "log")

    def __init__(self, engine: PolicyEngine, bus: EventBus | None) -> None:
        self.engine = engine
        self.cache = PolicyCache(engine, bus)
        self.log = DecisionLog()
        self._evaluating = 0
        self._lull: asyncio.Future[None] | None = None
        self._writing = asyncio.Lock()  # one flush at a time: a reader's flush ends after the one in flight

    async def flush(self, uow: Callable[[], UnitOfWork]) -> int:
        """Write every decision waiting in the log, and the audit event of each denial, in one transaction; how
        many. On a failure they wait for the next flush (the service flushes every quarter second and at stop, and
        before a read of either log: `Ports.policies` is how the audit log reaches this). Flushes take turns, so
        that when one returns, every decision held before it was called is written, even those another flush
        had drained and was still writing."""
        async with self._writing:
            return await self._write(uow)

    async def _write(self, uow: Callable[[], UnitOfWork]) -> int:
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

    async def evaluate(self, prepared: PreparedPolicies, document: Mapping[str, Any]) -> list[Outcome]:
        self._evaluating += 1
        try:
            return await prepared.evaluate(document)
        finally:
            self._evaluating -= 1
            lull = self._lull
            if not self._evaluating and lull is not None and not lull.done():
                lull.set_result(None)  # (the waiter runs next, before the action that evaluated goes on waiting)

    async def lull(self, at_most_seconds: float) -> None:
        """Return once no evaluation is pending, or after `at_most_seconds` (a node never without one)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + at_most_seconds
        while self._evaluating and loop.time() < deadline:
            lull = self._lull = loop.create_future()
            timer = loop.call_at(deadline, _settle, lull)
            try:
                await lull
            finally:
                timer.cancel()
                if self._lull is lull:
                    self._lull = None


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
