"""Cross-node wake-ups through Postgres LISTEN/NOTIFY, on top of the in-process bus."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import asyncpg
import sqlalchemy as sa

from controlplane_adapters.memory.bus import LocalEventBus, LocalSubscription

log = logging.getLogger(__name__)

CHANNEL = "controlplane_events"
NOTIFY_ALL = "SELECT pg_notify($1, topic) FROM unnest($2::text[]) AS topic"
STOP_SECONDS = 5.0  # how long a stop waits for NOTIFYs still in flight
BUS_NAME = "controlplane-bus"  # the listener connections' application_name: how nodes count each other
PEERS = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 "
    "AND pid <> pg_backend_pid()"
)
HELLO, ACK = "bus:hello", "bus:ack"  # a node that starts says hello; every node that hears it answers ack
HELLO_SECONDS = 2.0  # how long a start waits for the other nodes' acks
UNKNOWN = 0  # the pid standing for nodes that could not be counted
PEERS_SECONDS = 1.0  # how often the other nodes are counted again


def asyncpg_dsn(url: str) -> str:
    return sa.make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class PostgresEventBus:
    """`publish` wakes local waiters at once and every other node through NOTIFY; a listener connection
    turns other nodes' notifications into local wake-ups (its own come back too, and are dropped: a second
    wake-up of every local waiter per publish). After a lost connection it reconnects and wakes
    every waiter, so nothing sleeps through a missed notification.

    A node alone on its database sends no NOTIFY at all: nobody else would hear it. Nodes know each other by
    their listener connections (`application_name` BUS_NAME in `pg_stat_activity`, counted every second), and
    a node that starts says hello and waits (up to HELLO_SECONDS) until every node it counted has answered:
    once its start returns, every other node notifies it of every change."""

    def __init__(self, url: str) -> None:
        self._dsn = asyncpg_dsn(url)
        self._local = LocalEventBus()
        self._connection: Any = None
        self._using = asyncio.Lock()  # one statement at a time on the connection
        self._pending: list[str] = []  # topics waiting for the next NOTIFY statement
        self._sent: asyncio.Future[None] | None = None  # resolved once the pending topics were sent
        self._sender: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._lost = asyncio.Event()
        self._peers: set[int] = set()  # the backend pids of the other nodes' listener connections
        self._awaited: set[int] = set()  # peers whose ack a start waits for
        self._acked = asyncio.Event()

    @property
    def peers(self) -> int:
        """How many other nodes listen on this database, as this node last learned."""
        return len(self._peers)

    async def start(self) -> None:
        await self._connect()
        self._keeper = asyncio.create_task(self._keep_connected(), name="notify-listener")

    async def stop(self) -> None:
        if self._sender is not None:  # what was published before the stop still goes out, unless Postgres hangs
            _, late = await asyncio.wait({self._sender}, timeout=STOP_SECONDS)
            for sender in late:
                sender.cancel()
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
        if self._connection is not None:
            with contextlib.suppress(Exception):  # past STOP_SECONDS (Postgres hangs), the socket is just closed
                await self._connection.close(timeout=STOP_SECONDS)

    async def _connect(self) -> None:
        connection = await asyncpg.connect(self._dsn, server_settings={"application_name": BUS_NAME})
        await connection.add_listener(CHANNEL, self._on_notify)
        connection.add_termination_listener(lambda _connection: self._lost.set())
        self._connection = connection
        self._lost.clear()
        await self._greet()

    async def _greet(self) -> None:
        """Count the other nodes, say hello, and wait until each has heard it (or HELLO_SECONDS passed)."""
        self._peers = set(await self._count_or_assume())
        self._awaited = self._peers - {UNKNOWN}
        self._acked.clear()
        await self._send([HELLO])
        if self._awaited:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._acked.wait(), HELLO_SECONDS)
            if self._awaited:
                log.warning("%d other node(s) did not answer hello in time", len(self._awaited))
        self._awaited = set()

    async def _count(self) -> list[int]:
        async with self._using:
            return [row[0] for row in await self._connection.fetch(PEERS, BUS_NAME)]

    async def _count_or_assume(self) -> list[int]:
        """The other nodes' pids; when they cannot be counted (a role that may not read `pg_stat_activity`),
        an unknown node (pid 0) is assumed, so that every change is notified as before."""
        try:
            return await self._count()
        except asyncpg.PostgresError:
            log.warning("cannot count the other nodes (pg_stat_activity); notifying every change", exc_info=True)
            return [UNKNOWN]

    async def _keep_connected(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._lost.wait(), PEERS_SECONDS)
            if not self._lost.is_set():
                try:
                    self._peers = set(await self._count_or_assume())
                except (OSError, asyncpg.InterfaceError):
                    log.warning("counting the other nodes failed", exc_info=True)
                continue
            log.warning("LISTEN connection lost; reconnecting")
            delay = 0.2
            while True:
                try:
                    await self._connect()
                    break
                except (OSError, asyncpg.PostgresError):
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 5.0)
            self._local.deliver_all()

    def _on_notify(self, connection: Any, pid: int, _channel: str, payload: str) -> None:
        if pid == connection.get_server_pid():
            return  # our own NOTIFY (sent on this connection): `publish` already woke the local waiters
        if payload == HELLO:  # a node started: notify it from now on, and tell it so
            self._peers.add(pid)
            self._queue([ACK])
            return
        if payload == ACK:
            self._peers.add(pid)
            self._awaited.discard(pid)
            if not self._awaited:
                self._acked.set()
            return
        self._peers.add(pid)  # a node that changed something is a node
        self._local.deliver(payload)

    async def publish(self, *topics: str) -> None:
        """Wake this node's waiters now and the other nodes' through NOTIFY; returns once the NOTIFY was sent.

        Publishes that arrive while a NOTIFY is in flight share the next one: a single statement for every
        waiting topic. Sent one by one (each a network round trip, one at a time on the one connection), the
        NOTIFYs of an execution round trip queued behind each other under load."""
        woken = sum(self._local.deliver(topic) for topic in topics)
        if topics and self._peers:
            await self._send(topics)
        elif woken:
            # Let the woken waiters run before the publisher goes on (as they did while it waited for its NOTIFY):
            # with many streams on one execution, the delivery p99 is lower with this yield (docs/benchmarks.md).
            await asyncio.sleep(0)

    async def _send(self, topics: list[str] | tuple[str, ...]) -> None:
        sent = self._queue(topics)
        if sent is not None:
            await asyncio.shield(sent)

    def _queue(self, topics: list[str] | tuple[str, ...]) -> asyncio.Future[None] | None:
        connection = self._connection
        if connection is None or connection.is_closed():
            return None
        self._pending.extend(topics)
        if self._sent is None:
            self._sent = asyncio.get_running_loop().create_future()
        sent = self._sent
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send_pending(), name="notify-sender")
        return sent

    async def _send_pending(self) -> None:
        while self._pending:
            topics, self._pending = self._pending, []
            sent, self._sent = self._sent, None
            try:
                connection = self._connection
                if connection is not None and not connection.is_closed():
                    async with self._using:
                        await connection.execute(NOTIFY_ALL, CHANNEL, topics)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                log.warning("NOTIFY failed; other nodes will see the change on their next wake-up", exc_info=True)
                self._lost.set()
            finally:
                if sent is not None and not sent.done():
                    sent.set_result(None)

    def subscribe(self, topic: str) -> LocalSubscription:
        return self._local.subscribe(topic)
