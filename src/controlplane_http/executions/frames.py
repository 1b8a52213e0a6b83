"""The server-sent events' framing: `id: <seq>`, `event: <type>`, `data: <json>`, the retry hint and keep-alive
comments; each event's frame encoded once per node."""

from __future__ import annotations

from collections import OrderedDict

import msgspec

from controlplane_domain.executions.entity import ExecutionEvent

KEEPALIVE = b": keep-alive\n\n"
RETRY = b"retry: 2000\n\n"


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


def encode_event(event: ExecutionEvent) -> bytes:
    data = msgspec.json.encode(
        {"execution_id": event.execution_id, "seq": event.seq, "type": event.type.value, "attempt": event.attempt,
         "data": event.data, "created_at": event.created_at}
    )  # fmt: skip
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (event.seq, event.type.value.encode(), data)
