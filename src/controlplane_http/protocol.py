"""uvicorn as `controlplane serve` runs it: its HTTP protocol (httptools) with the writes of one event-loop turn
sent as one, and its server with a stop by signal that ends the process with 0 (`CleanStopServer`).

uvicorn writes a response's status line and headers, then its body, as two `transport.write` calls: two
`send` system calls and two TCP segments on every answer, each waking the client. An ASGI app must send them
as two messages, and they arrive in the same turn of the loop whenever the answer is complete (every JSON
answer of this service). `CorkedTransport` gathers what is written during a turn and hands it to the socket
once, at the end of the turn (`call_soon`), in order; a close sends what is gathered first. A stream's events
(SSE) are written as they come, each turn's on its own. Measured in docs/benchmarks.md ("Seventh round").
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn
from uvicorn.config import HTTP_PROTOCOLS
from uvicorn.importer import import_from_string
from uvicorn.server import HANDLED_SIGNALS


class CorkedTransport:
    """A transport whose writes of one loop turn go out as one `writelines` (one system call)."""

    __slots__ = ("_loop", "_pending", "_transport")

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending and not self._transport.is_closing():
            self._transport.writelines(pending)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:  # everything else is the transport's own
        return getattr(self._transport, name)


class CorkedHttpProtocol(asyncio.Protocol):
    """uvicorn's httptools protocol (the one `--http httptools` names) on a `CorkedTransport`: it wraps that
    protocol and speaks to it through asyncio's `Protocol` interface only, as the event loop would."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # (what uvicorn hands its protocol: passed on as is)
        self.protocol: asyncio.Protocol = _httptools()(*args, **kwargs)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:  # uvloop's is no asyncio.Transport
        self.protocol.connection_made(CorkedTransport(transport, asyncio.get_running_loop()))  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        self.protocol.data_received(data)

    def eof_received(self) -> bool | None:
        return self.protocol.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.connection_lost(exc)

    def pause_writing(self) -> None:
        self.protocol.pause_writing()

    def resume_writing(self) -> None:
        self.protocol.resume_writing()


@functools.cache
def _httptools() -> type[asyncio.Protocol]:
    protocol: type[asyncio.Protocol] = import_from_string(HTTP_PROTOCOLS["httptools"])
    return protocol


class CleanStopServer(uvicorn.Server):
    """uvicorn's server, but a stop asked by SIGTERM or SIGINT returns from `run()` once it is done, so that the
    process exits 0 after a clean stop.

    uvicorn's `capture_signals` (since 0.29) puts back the handlers it replaced when the server has stopped, then
    raises the signals it caught again: SIGTERM's default handler then kills the process (status -15, 143 in a
    shell) after the clean stop, which supervisors report as a failure (Kubernetes shows 143, a job fails). This is
    the same capture without the raise. (With `--workers`, uvicorn's supervisor stops its server processes itself
    and exits 0 on its own.)"""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
            yield
            return
        replaced = {number: signal.signal(number, self.handle_exit) for number in HANDLED_SIGNALS}
        try:
            yield
        finally:
            for number, handler in replaced.items():
                signal.signal(number, handler)
