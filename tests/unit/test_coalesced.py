"""Point reads of one turn of the loop share one statement (controlplane_adapters/sql/coalesced.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from typing import Any

import pytest

from controlplane_adapters.sql.coalesced import Coalescer

ROWS = {"a": [("a", 1)], "b": [("b", 2), ("b", 3)]}  # "c" has no rows


class Table:
    """A read of keys that records each call and can be made to fail or to wait."""

    def __init__(self) -> None:
        self.calls: list[list[Hashable]] = []
        self.fail: Exception | None = None
        self.poison: str | None = None  # a key whose presence fails the whole read
        self.gate: asyncio.Event | None = None
        self.reading = asyncio.Event()  # set once a read began

    async def read(self, keys: list[Hashable]) -> list[Any]:
        self.calls.append(sorted(keys))  # type: ignore[type-var]
        self.reading.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.fail is not None:
            raise self.fail
        if self.poison in keys:
            raise ValueError(f"cannot read {self.poison!r}")
        return [row for key in keys for row in ROWS.get(str(key), [])]


def coalescer() -> Coalescer:
    return Coalescer(lambda row: row[0])


async def test_readers_of_one_turn_share_one_read_and_each_gets_its_own_rows() -> None:
    table, reads = Table(), coalescer()
    answers = await asyncio.gather(*(reads.read(key, table.read) for key in ["a", "b", "c", "a"]))
    assert answers == [ROWS["a"], ROWS["b"], [], ROWS["a"]]
    assert table.calls == [["a", "b", "c"]]
    assert (reads.batches, reads.keys) == (1, 3)


async def test_a_reader_alone_reads_alone_and_a_later_turn_reads_again() -> None:
    table, reads = Table(), coalescer()
    assert await reads.read("b", table.read) == ROWS["b"]
    assert await reads.read("a", table.read) == ROWS["a"]
    assert table.calls == [["b"], ["a"]]


async def test_when_the_leader_fails_every_reader_reads_on_its_own_and_meets_its_own_error() -> None:
    table, reads = Table(), coalescer()
    table.fail = RuntimeError("database away")
    answers = await asyncio.gather(*(reads.read(key, table.read) for key in ["a", "b"]), return_exceptions=True)
    assert [type(answer) for answer in answers] == [RuntimeError, RuntimeError]
    assert table.calls == [["a", "b"], ["a"], ["b"]]  # then each tried again alone, the leader too
    table.fail = None
    assert await reads.read("a", table.read) == ROWS["a"]  # nothing left half-open


async def test_a_cancelled_leader_leaves_its_followers_to_read_alone() -> None:
    table, reads = Table(), coalescer()
    table.gate = asyncio.Event()
    leader = asyncio.create_task(reads.read("a", table.read))
    follower = asyncio.create_task(reads.read("b", table.read))
    await table.reading.wait()  # the leader is in its read, the follower waits for it
    leader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leader
    table.gate.set()
    assert await follower == ROWS["b"]
    assert table.calls == [["a", "b"], ["b"]]


async def test_a_cancelled_follower_leaves_the_others_their_answers() -> None:
    table, reads = Table(), coalescer()
    table.gate = asyncio.Event()
    leader = asyncio.create_task(reads.read("a", table.read))
    quitter = asyncio.create_task(reads.read("b", table.read))
    stayer = asyncio.create_task(reads.read("c", table.read))
    await table.reading.wait()
    quitter.cancel()
    table.gate.set()
    assert await leader == ROWS["a"]
    assert await stayer == []
    with pytest.raises(asyncio.CancelledError):
        await quitter
    assert table.calls == [["a", "b", "c"]]


async def test_a_full_batch_leaves_the_next_readers_to_a_batch_of_their_own() -> None:
    table, reads = Table(), Coalescer(lambda row: row[0], max_keys=2)
    answers = await asyncio.gather(*(reads.read(key, table.read) for key in ["a", "b", "a", "c", "b", "a"]))
    assert answers == [ROWS["a"], ROWS["b"], ROWS["a"], [], ROWS["b"], ROWS["a"]]
    # the third reader's key is in the full batch: it joins; "c" leads a second batch, which the next "b" joins;
    # the last "a" finds that one full too
    assert table.calls == [["a", "b"], ["b", "c"], ["a"]]
    assert (reads.batches, reads.keys) == (3, 5)


async def test_a_key_that_fails_the_shared_read_fails_only_the_reader_that_asked_for_it() -> None:
    table, reads = Table(), coalescer()
    table.poison = "bad"
    answers = await asyncio.gather(*(reads.read(key, table.read) for key in ["a", "bad", "b"]), return_exceptions=True)
    assert answers[0] == ROWS["a"]
    assert isinstance(answers[1], ValueError)
    assert answers[2] == ROWS["b"]
    assert table.calls[0] == ["a", "b", "bad"]  # then each alone
    assert sorted(map(tuple, table.calls[1:])) == [("a",), ("b",), ("bad",)]


async def test_while_reads_are_in_flight_at_their_bound_the_next_batch_waits_open_and_grows() -> None:
    table, reads = Table(), Coalescer(lambda row: row[0], max_in_flight=1)
    table.gate = asyncio.Event()
    first = asyncio.ensure_future(reads.read("a", table.read))
    await table.reading.wait()  # the first batch's read is in flight, held at the gate
    later = [asyncio.ensure_future(reads.read(key, table.read)) for key in ["b"]]
    for _ in range(3):  # turns pass: the second leader waits for the slot, its batch open
        await asyncio.sleep(0)
    later += [asyncio.ensure_future(reads.read(key, table.read)) for key in ["c", "b"]]
    await asyncio.sleep(0)
    assert table.calls == [["a"]]
    table.gate.set()
    assert await asyncio.gather(first, *later) == [ROWS["a"], ROWS["b"], [], ROWS["b"]]
    assert table.calls == [["a"], ["b", "c"]]
