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
import signal
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
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


class CorkedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol on a `CorkedTransport`."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:  # uvloop's is no asyncio.Transport
        super().connection_made(CorkedTransport(transport, self.loop))  # type: ignore[arg-type]


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
