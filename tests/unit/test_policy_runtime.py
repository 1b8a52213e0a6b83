"""The policy runtime counts the evaluations pending, so that the decision log's flush waits for a lull (it holds a
SQLite store's event loop for milliseconds, which an execute waiting for its policies' answer would pay)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from controlplane_domain.policies.entity import Outcome, Policy
from controlplane_domain.policies.runtime import PolicyRuntime


class Waiting:
    """Prepared policies whose evaluation ends when `done` is set."""

    def __init__(self) -> None:
        self.done = asyncio.Event()

    async def evaluate(self, document: Mapping[str, Any]) -> list[Outcome]:
        await self.done.wait()
        return [Outcome("p")]


class Engine:
    async def check(self, rego: str) -> None:
        return None

    def prepare(self, policies: Sequence[Policy]) -> Waiting:
        return Waiting()


def test_the_lull_comes_when_the_pending_evaluations_end() -> None:
    async def scenario() -> list[str]:
        runtime, seen = PolicyRuntime(Engine(), None), []
        await runtime.lull(10)  # none pending: at once
        prepared = Waiting()
        evaluation = asyncio.ensure_future(runtime.evaluate(prepared, {}))
        await asyncio.sleep(0)

        async def flush() -> None:
            await runtime.lull(10)
            seen.append("flushed")

        flushing = asyncio.ensure_future(flush())
        for _ in range(5):
            await asyncio.sleep(0)
        seen.append("still waiting" if not flushing.done() else "did not wait")
        prepared.done.set()
        assert await evaluation == [Outcome("p")]
        await asyncio.wait_for(flushing, 5)
        return seen

    assert asyncio.run(scenario()) == ["still waiting", "flushed"]


def test_the_lull_is_not_waited_for_longer_than_asked() -> None:
    async def scenario() -> bool:
        runtime = PolicyRuntime(Engine(), None)
        evaluation = asyncio.ensure_future(runtime.evaluate(Waiting(), {}))
        await asyncio.sleep(0)
        await asyncio.wait_for(runtime.lull(0.01), 5)
        pending = not evaluation.done()
        evaluation.cancel()
        return pending

    assert asyncio.run(scenario()) is True
