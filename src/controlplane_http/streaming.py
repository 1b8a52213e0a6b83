"""Server-sent events of an execution: `id: <seq>`, `event: <type>`, `data: <json>`, keep-alive comments."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
from litestar.response import Stream

from controlplane_adapters.memory.tail import EventTail
from controlplane_domain.executions import ExecutionEvent
from controlplane_domain.ports import Ports
from controlplane_domain.usecases import executions

KEEPALIVE = b": keep-alive\n\n"


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


def encode_event(event: ExecutionEvent) -> bytes:
    data = msgspec.json.encode(
        {"execution_id": event.execution_id, "seq": event.seq, "type": event.type.value, "attempt": event.attempt,
         "data": event.data, "created_at": event.created_at}
    )  # fmt: skip
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (event.seq, event.type.value.encode(), data)


def parse_last_event_id(header: str | None, query: int | None) -> int:
    """The sequence number to resume after: the `Last-Event-ID` header wins over the query parameter."""
    if header is not None and header.strip().isdigit():
        return int(header.strip())
    return query or 0


async def _frames(
    ports: Ports, organization_id: str, execution_id: str, after_seq: int, options: StreamOptions
) -> AsyncIterator[bytes]:
    yield b"retry: 2000\n\n"
    frame = options.frames.frame
    read_after = options.tail.after if options.tail is not None else None
    async for event in executions.follow(
        ports, organization_id, execution_id, after_seq, options.keepalive_seconds, read_after
    ):
        yield KEEPALIVE if event is None else frame(event)


async def event_stream(
    ports: Ports, organization_id: str, execution_id: str, after_seq: int, options: StreamOptions, status: int = 200
) -> Stream:
    """404 before the stream starts when the execution is not the caller's; then the events, live."""
    await executions.get_execution(ports, organization_id, execution_id)
    headers: dict[str, Any] = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Stream(
        _frames(ports, organization_id, execution_id, after_seq, options),
        media_type="text/event-stream",
        headers=headers,
        status_code=status,
    )
