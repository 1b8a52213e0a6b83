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


class Gated:
    """A unit of work whose commit waits for `open`; what it wrote once committed is in `written`."""

    def __init__(self, written: list[str], open_: asyncio.Event) -> None:
        self.written, self.open, self.pending = written, open_, list[str]()
        self.policy_decisions = self
        self.audit_events = self

    async def add_many(self, decisions: Sequence[Any]) -> None:
        self.pending.extend(decisions)

    async def commit(self) -> None:
        await self.open.wait()
        self.written.extend(self.pending)

    async def __aenter__(self) -> Gated:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


def test_a_flush_returns_only_once_a_flush_in_flight_has_written_its_decisions() -> None:
    """A read of the log flushes first: it must see decisions that the periodic flush had already drained but not
    yet committed (a read right after an execute found none under load)."""

    async def scenario() -> tuple[list[str], list[str]]:
        runtime, written, closed, opened = PolicyRuntime(Engine(), None), list[str](), asyncio.Event(), asyncio.Event()
        opened.set()
        runtime.log.hold(["first"])  # type: ignore[list-item]
        periodic = asyncio.ensure_future(runtime.flush(lambda: Gated(written, closed)))  # type: ignore[arg-type,return-value]
        for _ in range(5):
            await asyncio.sleep(0)  # the periodic flush has drained "first" and waits on its commit
        runtime.log.hold(["second"])  # type: ignore[list-item]
        reader = asyncio.ensure_future(runtime.flush(lambda: Gated(written, opened)))  # type: ignore[arg-type,return-value]
        for _ in range(5):
            await asyncio.sleep(0)
        seen_when_the_reader_returned = list(written) if reader.done() else ["the reader waits"]
        closed.set()
        await asyncio.wait_for(asyncio.gather(periodic, reader), 5)
        return seen_when_the_reader_returned, written

    assert asyncio.run(scenario()) == (["the reader waits"], ["first", "second"])
