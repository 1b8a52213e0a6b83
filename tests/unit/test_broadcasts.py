"""One broadcast a node per followed execution: every stream gets every event once, in order, whatever the
others do (a slow client, a late joiner, a client that goes away), and the broadcast ends with its last stream."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from controlplane_adapters.memory.bus import LocalEventBus, LocalSubscription
from controlplane_domain.executions.entity import (
    EventType,
    Execution,
    ExecutionStatus,
    NewEvent,
    TargetType,
    numbered,
)
from controlplane_domain.ports import Ports
from controlplane_http.executions.streaming import Followed, StreamOptions
from tests.support import memory_ports

ORG = "org-a"
NOW = datetime(2026, 3, 1, tzinfo=UTC)
WAIT = 10  # seconds a test waits for what must happen at once, before it fails


class CountingBus(LocalEventBus):
    def __init__(self) -> None:
        super().__init__()
        self.subscribed = 0

    def subscribe(self, topic: str) -> LocalSubscription:
        self.subscribed += 1
        return super().subscribe(topic)


class Client:
    """A stream's ASGI side: what it was sent, a way to hang up, and a gate that makes its sends wait (a client
    that does not read: its socket buffer is full)."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.finished = False
        self.gate: asyncio.Future[None] | None = None
        self._hangup: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._changed = asyncio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        if self.gate is not None:
            await self.gate
        self.bodies.append(message["body"])
        self.finished = not message.get("more_body", False)
        self._changed.set()

    async def receive(self) -> dict[str, Any]:
        await self._hangup
        return {"type": "http.disconnect"}

    def hang_up(self) -> None:
        self._hangup.set_result(None)

    def seqs(self) -> list[int]:
        return [int(found) for body in self.bodies for found in re.findall(rb"^id: (\d+)$", body, re.M)]

    async def until(self, seq: int) -> None:
        async def reached() -> None:
            while seq not in self.seqs():
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(reached(), WAIT)


async def running_execution(ports: Ports, execution_id: str = "e1") -> Execution:
    execution = Execution(id=execution_id, organization_id=ORG, target_type=TargetType.AGENT, agent_id="a",
                          team_id=None, worker_queue_id="q", prompt="p", status=ExecutionStatus.RUNNING, attempt=1,
                          created_at=NOW, updated_at=NOW)  # fmt: skip
    events, execution = numbered(execution, [NewEvent(type=EventType.STATUS, data={"status": "running"})], NOW)
    async with ports.uow() as uow:
        await uow.executions.record(None, execution, events)
        await uow.commit()
    return execution


async def append(ports: Ports, execution: Execution, *types: EventType) -> Execution:
    """Append events as a worker's batch does: committed, then published."""
    events, after = numbered(execution, [NewEvent(type=kind, data={"n": 1}) for kind in types], NOW)
    if EventType.DONE in types:
        after = after.changed(status=ExecutionStatus.COMPLETED)
    async with ports.uow() as uow:
        assert await uow.executions.record(execution, after, events)
        await uow.commit()
    assert ports.bus is not None
    await ports.bus.publish(f"execution:{execution.id}")
    return after


def setup() -> tuple[Ports, CountingBus, StreamOptions]:
    bus = CountingBus()
    return replace(memory_ports(), bus=bus), bus, StreamOptions(keepalive_seconds=60)


def stream(ports: Ports, options: StreamOptions, client: Client, after: int = 0, execution_id: str = "e1") -> Any:
    followed = Followed(ports, ORG, execution_id, after, options)
    return asyncio.ensure_future(followed.run(client.send, client.receive))  # type: ignore[arg-type]


async def followed_by(ports: Ports, options: StreamOptions, *clients: Client) -> list[Any]:
    """A stream for each client, once every one of them has its first frame (the execution's status event)."""
    tasks = [stream(ports, options, client) for client in clients]
    for client in clients:
        await client.until(1)
    return tasks


async def test_every_stream_gets_every_event_once_in_order_from_one_broadcast() -> None:
    ports, bus, options = setup()
    execution = await running_execution(ports)
    clients = [Client() for _ in range(50)]
    tasks = await followed_by(ports, options, *clients)
    assert len(options.broadcasts) == 1
    assert bus.subscribed == 1, "one subscription for the execution, not one a stream"
    execution = await append(ports, execution, EventType.LOG, EventType.LOG)
    execution = await append(ports, execution, EventType.MESSAGE_CHUNK)
    await append(ports, execution, EventType.DONE)
    await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
    for client in clients:
        assert client.seqs() == [1, 2, 3, 4, 5]
        assert client.bodies[0] == b"retry: 2000\n\n"
        assert client.finished
    assert len(options.broadcasts) == 0
    assert bus.topics == 0, "the broadcast's subscription is closed"


async def test_a_slow_client_holds_up_no_other_and_still_gets_everything_in_order() -> None:
    ports, _, options = setup()
    execution = await running_execution(ports)
    slow, quick = Client(), Client()
    tasks = await followed_by(ports, options, slow, quick)
    slow.gate = asyncio.get_running_loop().create_future()  # its socket is full from here on
    execution = await append(ports, execution, EventType.LOG)
    execution = await append(ports, execution, EventType.LOG, EventType.LOG)
    await quick.until(4)
    assert slow.seqs() == [1], "nothing reached the client that does not read"
    execution = await append(ports, execution, EventType.DONE)
    await asyncio.wait_for(tasks[1], WAIT)
    assert quick.seqs() == [1, 2, 3, 4, 5]
    assert not tasks[0].done(), "the slow stream still has frames to send"
    slow.gate.set_result(None)
    await asyncio.wait_for(tasks[0], WAIT)
    assert slow.seqs() == [1, 2, 3, 4, 5]
    assert slow.finished


async def test_a_late_stream_catches_up_then_joins_without_gaps_or_repeats() -> None:
    ports, _, options = setup()
    execution = await running_execution(ports)
    early = Client()
    tasks = [stream(ports, options, early)]
    execution = await append(ports, execution, EventType.LOG, EventType.LOG)
    await early.until(3)
    late, ahead = Client(), Client()
    tasks += [stream(ports, options, late, after=1), stream(ports, options, ahead, after=3)]
    await late.until(3)
    assert late.seqs() == [2, 3]
    execution = await append(ports, execution, EventType.LOG)
    await ahead.until(4)
    assert ahead.seqs() == [4]
    await append(ports, execution, EventType.DONE)
    await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
    assert early.seqs() == [1, 2, 3, 4, 5]
    assert late.seqs() == [2, 3, 4, 5]
    assert ahead.seqs() == [4, 5]
    assert len(options.broadcasts) == 0


async def test_a_client_that_hangs_up_leaves_the_others_and_the_last_one_ends_the_broadcast() -> None:
    ports, bus, options = setup()
    execution = await running_execution(ports)
    staying, leaving = Client(), Client()
    tasks = await followed_by(ports, options, staying, leaving)
    leaving.hang_up()
    await asyncio.wait_for(tasks[1], WAIT)
    execution = await append(ports, execution, EventType.LOG)
    await staying.until(2)
    assert leaving.seqs() == [1]
    assert len(options.broadcasts) == 1
    staying.hang_up()
    await asyncio.wait_for(tasks[0], WAIT)
    assert len(options.broadcasts) == 0
    assert bus.topics == 0
    again = Client()  # a stream after that starts a broadcast of its own
    task = stream(ports, options, again, after=2)
    await append(ports, execution, EventType.DONE)
    await asyncio.wait_for(task, WAIT)
    assert again.seqs() == [3]


async def test_a_stream_of_a_finished_execution_gets_its_log_and_ends() -> None:
    ports, _, options = setup()
    execution = await running_execution(ports)
    execution = await append(ports, execution, EventType.LOG)
    await append(ports, execution, EventType.DONE)
    first, resumed = Client(), Client()
    await asyncio.wait_for(asyncio.gather(stream(ports, options, first), stream(ports, options, resumed, 2)), WAIT)
    assert first.seqs() == [1, 2, 3]
    assert resumed.seqs() == [3]
    assert first.finished
    assert resumed.finished
    assert len(options.broadcasts) == 0


async def test_another_organizations_stream_of_the_same_id_gets_a_broadcast_of_its_own() -> None:
    ports, _, options = setup()
    execution = await running_execution(ports)
    mine = Client()
    task = stream(ports, options, mine)
    await mine.until(1)
    other = Client()
    foreign = asyncio.ensure_future(
        Followed(ports, "org-b", "e1", 0, options).run(other.send, other.receive)  # type: ignore[arg-type]
    )
    await asyncio.wait_for(foreign, WAIT)
    assert other.seqs() == [], "org-b sees nothing of org-a's execution"
    await append(ports, execution, EventType.DONE)
    await asyncio.wait_for(task, WAIT)
    assert mine.seqs() == [1, 2]


async def test_a_client_that_stops_reading_gets_what_was_queued_then_its_stream_ends(monkeypatch: Any) -> None:
    from controlplane_http.executions import broadcasts

    monkeypatch.setattr(broadcasts, "MAX_BACKLOG", 3)
    ports, _, options = setup()
    execution = await running_execution(ports)
    stuck, reading = Client(), Client()
    tasks = await followed_by(ports, options, stuck, reading)
    stuck.gate = asyncio.get_running_loop().create_future()
    for _ in range(6):
        execution = await append(ports, execution, EventType.LOG)
    await reading.until(7)
    stuck.gate.set_result(None)
    await asyncio.wait_for(tasks[0], WAIT)
    assert stuck.seqs() == [1, 2, 3, 4, 5], "the send that waited, then the three queued behind it"
    assert stuck.finished
    assert not tasks[1].done(), "the other stream goes on"
    await append(ports, execution, EventType.DONE)
    await asyncio.wait_for(tasks[1], WAIT)
    assert reading.seqs() == [1, 2, 3, 4, 5, 6, 7, 8]


async def test_iterated_a_followed_execution_is_the_same_frames_a_stream_is_sent() -> None:
    """Code that takes the `EventStream` as a plain Litestar `Stream` iterates it: the same bytes, in one task."""
    ports, _, options = setup()
    execution = await running_execution(ports)
    execution = await append(ports, execution, EventType.LOG)
    await append(ports, execution, EventType.DONE)
    streamed = Client()
    await asyncio.wait_for(stream(ports, options, streamed, after=1), WAIT)
    iterated = [frame async for frame in Followed(ports, ORG, "e1", 1, options)]
    assert iterated == streamed.bodies[:-1]  # all but the end of the body
    assert streamed.bodies[-1] == b""
