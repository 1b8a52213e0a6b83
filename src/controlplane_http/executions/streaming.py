"""Server-sent events of an execution: `id: <seq>`, `event: <type>`, `data: <json>`, keep-alive comments."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
from litestar.response import Stream
from litestar.response.streaming import ASGIStreamingResponse
from litestar.types import Receive, Send

from controlplane_adapters.memory.tail import EventTail
from controlplane_domain.executions import queries
from controlplane_domain.executions.entity import EventType, ExecutionEvent
from controlplane_domain.ports import Ports
from controlplane_http.stopping import Stopping

if TYPE_CHECKING:
    from litestar.app import Litestar
    from litestar.background_tasks import BackgroundTask, BackgroundTasks
    from litestar.connection import Request
    from litestar.datastructures.cookie import Cookie
    from litestar.enums import MediaType
    from litestar.response.base import ASGIResponse
    from litestar.types import TypeEncodersMap

log = logging.getLogger(__name__)

KEEPALIVE = b": keep-alive\n\n"
RETRY = b"retry: 2000\n\n"
MAX_BACKLOG = 4096  # frames queued for a client that does not read; past that its stream ends (it resumes later)


class Frames:
    """Frames of recent events, shared by every stream of one app that sends them: an event is immutable once
    appended and (execution, seq) names it in one store, so an event is encoded once per node, not per stream."""

    def __init__(self, kept: int = 4096) -> None:
        self._frames: OrderedDict[tuple[str, int], bytes] = OrderedDict()
        self._kept = kept

    def frame(self, event: ExecutionEvent) -> bytes:
        key = (event.execution_id, event.seq)
        frame = self._frames.get(key)
        if frame is None:
            frame = self._frames[key] = encode_event(event)
            if len(self._frames) > self._kept:
                self._frames.popitem(last=False)
        return frame


@dataclass(frozen=True, slots=True)
class StreamOptions:
    keepalive_seconds: float = 15.0
    tail: EventTail | None = None
    frames: Frames = field(default_factory=Frames)
    broadcasts: Broadcasts = field(default_factory=lambda: Broadcasts())
    stopping: Stopping = field(default_factory=Stopping)  # the server's stop ends every stream (and long poll)

    @property
    def read_after(self) -> Callable[[str, str, int], Awaitable[list[ExecutionEvent]]] | None:
        """How followers read what follows a sequence number: the shared tail, or (None) each from the log."""
        return self.tail.after if self.tail is not None else None


def encode_event(event: ExecutionEvent) -> bytes:
    data = msgspec.json.encode(
        {"execution_id": event.execution_id, "seq": event.seq, "type": event.type.value, "attempt": event.attempt,
         "data": event.data, "created_at": event.created_at}
    )  # fmt: skip
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (event.seq, event.type.value.encode(), data)


def parse_last_event_id(header: str | None, query: int | None) -> int:
    """The sequence number to resume after: the `Last-Event-ID` header wins over the query parameter. (A number past
    the execution's last event is taken as its last: see `event_stream`.)"""
    if header is not None and header.strip().isdigit():
        digits = header.strip()
        return int(digits) if len(digits) <= 18 else 10**18  # (int() refuses thousands of digits)
    return query or 0


async def _frames(
    ports: Ports, organization_id: str, execution_id: str, after_seq: int, options: StreamOptions
) -> AsyncIterator[bytes]:
    yield RETRY
    frame = options.frames.frame
    async for event in queries.follow(
        ports, organization_id, execution_id, after_seq, options.keepalive_seconds, options.read_after
    ):
        yield KEEPALIVE if event is None else frame(event)


async def event_stream(
    ports: Ports, organization_id: str, execution_id: str, after_seq: int, options: StreamOptions, status: int = 200
) -> Stream:
    """404 before the stream starts when the execution is not the caller's; then the events, live. A stream asked
    to resume past the last event resumes after the last event: the events it claims to have seen do not exist,
    and the node's broadcast of the execution, which it may start, must not wait for them."""
    execution = await queries.get_execution(ports, organization_id, execution_id)
    after_seq = min(after_seq, execution.last_seq)
    headers: dict[str, Any] = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return EventStream(
        Followed(ports, organization_id, execution_id, after_seq, options),
        media_type="text/event-stream",
        headers=headers,
        status_code=status,
    )


@dataclass(frozen=True, slots=True)
class Followed:
    """What one stream follows: an execution's events after `after_seq`. Iterated, it is that stream's own frames
    (the per-stream path); `EventStream` sends them through the node's `Broadcasts` instead."""

    ports: Ports
    organization_id: str
    execution_id: str
    after_seq: int
    options: StreamOptions

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _frames(self.ports, self.organization_id, self.execution_id, self.after_seq, self.options)

    async def run(self, send: Send, receive: Receive) -> None:
        """The stream's body: the retry hint, then every event as the node's broadcast of the execution delivers
        it, until the terminal event, a failure of the broadcast, or the client going away."""
        await send({"type": "http.response.body", "body": RETRY, "more_body": True})
        follower = _Follower(send, self.after_seq)
        listening = asyncio.ensure_future(_until_disconnect(receive))
        listening.add_done_callback(follower.gone)
        broadcasts = self.options.broadcasts
        forget = self.options.stopping.on_stop(follower.end)  # its client resumes with Last-Event-ID elsewhere
        try:
            await broadcasts.join(self, follower)
            await follower.ended
            if follower.writer is not None and not listening.done():
                await follower.writer  # what a slow client has not taken yet goes before the end
        finally:
            forget()
            listening.cancel()
            broadcasts.leave(self, follower)
            if follower.writer is not None:
                follower.writer.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class EventStream(Stream):
    """A `Stream` of a `Followed` execution, sent by the node's broadcast of it rather than by a task a stream."""

    __slots__ = ()

    def to_asgi_response(
        self,
        app: Litestar | None,
        request: Request[Any, Any, Any],
        *,
        background: BackgroundTask | BackgroundTasks | None = None,
        cookies: Iterable[Cookie] | None = None,
        encoded_headers: Iterable[tuple[bytes, bytes]] | None = None,
        headers: dict[str, str] | None = None,
        is_head_response: bool = False,
        media_type: MediaType | str | None = None,
        status_code: int | None = None,
        type_encoders: TypeEncodersMap | None = None,
    ) -> ASGIResponse:
        if not isinstance(self.iterator, Followed):
            return super().to_asgi_response(
                app, request, background=background, cookies=cookies, encoded_headers=encoded_headers,
                headers=headers, is_head_response=is_head_response, media_type=media_type, status_code=status_code,
                type_encoders=type_encoders,
            )  # fmt: skip
        return _FollowingResponse(
            iterator=self.iterator,
            background=self.background or background,
            content_length=0,
            cookies=self.cookies if cookies is None else [*self.cookies, *cookies],
            encoded_headers=encoded_headers,
            encoding=self.encoding,
            headers={**headers, **self.headers} if headers is not None else self.headers,
            is_head_response=is_head_response,
            media_type=str(self.media_type or media_type),
            status_code=self.status_code or status_code,
        )


class _FollowingResponse(ASGIStreamingResponse):
    __slots__ = ()

    async def send_body(self, send: Send, receive: Receive) -> None:
        followed = self.iterator
        assert isinstance(followed, Followed)
        await followed.run(send, receive)


class _Follower:
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
    followers: set[_Follower] = field(default_factory=set)
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

    async def join(self, followed: Followed, follower: _Follower) -> None:
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
                events = await queries.read_events_after(
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

    def leave(self, followed: Followed, follower: _Follower) -> None:
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
            async for event in queries.follow(
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
