"""Server-sent events of an execution: the stream the route answers with (`event_stream`), sent through the node's
broadcast of the execution (`broadcasts`), in frames of `frames`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter, Parameter
from litestar.response import Stream
from litestar.response.streaming import ASGIStreamingResponse
from litestar.types import Receive, Send

from controlplane_adapters.memory.tail import EventTail
from controlplane_domain.executions import queries as executions
from controlplane_domain.executions.entity import ExecutionEvent
from controlplane_domain.ports import Ports
from controlplane_http.executions.broadcasts import Broadcasts, Follower
from controlplane_http.executions.frames import KEEPALIVE, RETRY, Frames
from controlplane_http.stopping import Stopping

if TYPE_CHECKING:
    from litestar.app import Litestar
    from litestar.background_tasks import BackgroundTask, BackgroundTasks
    from litestar.connection import Request
    from litestar.datastructures.cookie import Cookie
    from litestar.enums import MediaType
    from litestar.response.base import ASGIResponse
    from litestar.types import TypeEncodersMap


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


# A stream's place to resume from: the `Last-Event-ID` header (a reconnecting browser's) or the query parameter.
LastEventIdHeader = Annotated[str | None, HeaderParameter(name="Last-Event-ID", required=False)]
LastEventId = Annotated[
    int | None, Parameter(ge=0, description="resume after this sequence number", schema_extra={"minimum": 0})
]


def sse_doc(event: type[Any], description: str) -> ResponseSpec:
    """A stream's documented 200: `text/event-stream`, its schema that of one event."""
    return ResponseSpec(event, description=description, media_type="text/event-stream", generate_examples=False)


def parse_last_event_id(header: str | None, query: int | None) -> int:
    """The sequence number to resume after: the `Last-Event-ID` header wins over the query parameter. (A number past
    the execution's last event is taken as its last: see `event_stream`.)"""
    if header is not None and header.strip().isascii() and header.strip().isdigit():
        digits = header.strip()
        return int(digits) if len(digits) <= 18 else 10**18  # (int() refuses thousands of digits)
    return query or 0


async def _frames(
    ports: Ports, organization_id: str, execution_id: str, after_seq: int, options: StreamOptions
) -> AsyncIterator[bytes]:
    yield RETRY
    frame = options.frames.frame
    async for event in executions.follow(
        ports, organization_id, execution_id, after_seq, options.keepalive_seconds, options.read_after
    ):
        yield KEEPALIVE if event is None else frame(event)


async def event_stream(
    ports: Ports, organization_id: str, execution_id: str, after_seq: int, options: StreamOptions, status: int = 200
) -> Stream:
    """404 before the stream starts when the execution is not the caller's; then the events, live. A stream asked
    to resume past the last event resumes after the last event: the events it claims to have seen do not exist,
    and the node's broadcast of the execution, which it may start, must not wait for them."""
    execution = await executions.get_execution(ports, organization_id, execution_id)
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
        follower = Follower(send, self.after_seq)
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
