"""The broadcast of an execution's events on one node: a single task follows the execution and hands each frame
to every stream that follows it (`streaming.Followed`), a slow client queued behind its own send."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from litestar.types import Send

from controlplane_domain.executions import queries as executions
from controlplane_domain.executions.entity import EventType
from controlplane_http.executions.frames import KEEPALIVE

if TYPE_CHECKING:
    from controlplane_http.executions.streaming import Followed

log = logging.getLogger(__name__)

MAX_BACKLOG = 4096  # frames queued for a client that does not read; past that its stream ends (it resumes later)


class Follower:
    """One stream as a broadcast sees it: its `send`, the last sequence number it was sent, and, while a send of
    its own waits for the client (a full socket buffer), the frames queued behind that send."""

    __slots__ = ("backlog", "ended", "last", "send", "writer")

    def __init__(self, send: Send, last: int) -> None:
        self.send = send
        self.last = last
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.backlog: deque[bytes] | None = None
        self.writer: asyncio.Task[None] | None = None

    def end(self) -> None:
        if not self.ended.done():
            self.ended.set_result(None)

    def gone(self, listening: asyncio.Future[None]) -> None:
        """The client went away (or its connection failed): the stream ends."""
        if not listening.cancelled():
            listening.exception()  # retrieved: a failed receive is the end of the stream, not an error to log
        self.end()

    def deliver(self, body: bytes) -> None:
        """Send `body` now when the client's socket takes it (a send that does not suspend: the common case, run
        to its end right here); otherwise queue it behind the send that waits, in a task of this stream's own, so
        that one slow client never holds up the others."""
        if self.ended.done():
            return
        if self.backlog is not None:
            self.backlog.append(body)
            if len(self.backlog) >= MAX_BACKLOG:  # it sends what is queued, then ends; its client resumes
                self.end()
            return
        sending = self.send({"type": "http.response.body", "body": body, "more_body": True}).__await__()
        try:
            waiting = sending.send(None)
        except StopIteration:
            return
        except Exception:  # the connection is gone: the stream ends
            log.debug("an event stream's send failed", exc_info=True)
            self.end()
            return
        self.backlog = deque()
        self.writer = asyncio.ensure_future(self._finish(sending, waiting))

    async def _finish(self, sending: Generator[Any, Any, None], waiting: Any) -> None:
        try:
            await _Resumed(sending, waiting)
            while self.backlog:
                body = self.backlog.popleft()
                await self.send({"type": "http.response.body", "body": body, "more_body": True})
        except Exception:
            log.debug("an event stream's send failed", exc_info=True)
            self.end()
        finally:
            self.backlog = None


class _Resumed:
    """Awaits the rest of an awaitable that was started by hand and suspended on `waiting` (what it yielded)."""

    __slots__ = ("_coroutine", "_waiting")

    def __init__(self, coroutine: Generator[Any, Any, None], waiting: Any) -> None:
        self._coroutine = coroutine
        self._waiting = waiting

    def __await__(self) -> Generator[Any, Any, None]:
        waiting = self._waiting
        while True:
            try:
                sent = yield waiting
            except BaseException as exc:  # a cancellation of the awaiting task goes into the coroutine
                try:
                    waiting = self._coroutine.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    waiting = self._coroutine.send(sent)
                except StopIteration:
                    return


@dataclass(slots=True, eq=False)
class _Broadcast:
    followers: set[Follower] = field(default_factory=set)
    position: int = 0  # the last sequence number the broadcast has delivered (or started after)
    task: asyncio.Task[None] | None = None


class Broadcasts:
    """One broadcast a node per followed execution: a single task follows the execution (one wake-up, one read
    of the event tail a batch) and hands each frame to every stream's `send`, where a task a stream woke, read and
    sent for itself (1000 streams: 1000 wake-ups an event). A stream that asks for events older than the
    broadcast has delivered reads them itself first, then joins it."""

    def __init__(self) -> None:
        self._live: dict[tuple[str, str], _Broadcast] = {}

    def __len__(self) -> int:
        return len(self._live)

    async def join(self, followed: Followed, follower: Follower) -> None:
        key = (followed.organization_id, followed.execution_id)
        options = followed.options
        read = options.read_after
        while not follower.ended.done():
            live = self._live.get(key)
            if live is None:
                live = self._live[key] = _Broadcast(position=follower.last)
                live.followers.add(follower)
                live.task = asyncio.ensure_future(self._run(followed, live))
                return
            if follower.last >= live.position:  # caught up (or ahead: what it has seen is skipped for it)
                live.followers.add(follower)
                return
            if read is not None:
                events = await read(followed.organization_id, followed.execution_id, follower.last)
            else:
                events = await executions.read_events_after(
                    followed.ports, followed.organization_id, followed.execution_id, follower.last
                )
            if not events:  # nothing to catch up after all: the broadcast's next events are the stream's
                follower.last = max(follower.last, live.position)
                continue
            for event in events:
                follower.deliver(options.frames.frame(event))
                follower.last = event.seq
                if event.type is EventType.DONE:
                    follower.end()
                    return

    def leave(self, followed: Followed, follower: Follower) -> None:
        key = (followed.organization_id, followed.execution_id)
        live = self._live.get(key)
        if live is None:
            return
        live.followers.discard(follower)
        if not live.followers:  # the last stream went away: so does the broadcast
            del self._live[key]
            if live.task is not None:
                live.task.cancel()

    async def _run(self, followed: Followed, live: _Broadcast) -> None:
        options = followed.options
        frame = options.frames.frame
        try:
            async for event in executions.follow(
                followed.ports, followed.organization_id, followed.execution_id, live.position,
                options.keepalive_seconds, options.read_after,
            ):  # fmt: skip
                if event is None:
                    for follower in list(live.followers):
                        follower.deliver(KEEPALIVE)
                    continue
                body = frame(event)
                seq = event.seq
                for follower in list(live.followers):
                    if seq > follower.last:
                        follower.last = seq
                        follower.deliver(body)
                live.position = seq
        except Exception:  # the streams end; their clients come back with Last-Event-ID (a cancellation passes)
            log.warning("the broadcast of execution %s failed", followed.execution_id, exc_info=True)
        finally:
            key = (followed.organization_id, followed.execution_id)
            if self._live.get(key) is live:
                del self._live[key]
            for follower in live.followers:
                follower.end()
