"""A loopback TCP proxy that a test can cut and restore, to play a database that goes away and comes back."""

from __future__ import annotations

import asyncio
import contextlib
import threading


class TcpProxy:
    """Forwards 127.0.0.1:<port> to a target; `cut()` drops every connection and stops listening; `stall()` keeps
    every connection open and forwards nothing more (a database that stops answering). With `patience`, a new
    connection waits up to that many seconds for the target to accept it (a load balancer that holds requests while
    its backend restarts); without, a target that refuses closes it at once."""

    def __init__(self, target_host: str, target_port: int, patience: float = 0.0) -> None:
        self.target = (target_host, target_port)
        self.patience = patience
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.port = 0
        self.stalled = False

    def _call(self, coroutine: object) -> object:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=10)  # type: ignore[arg-type]

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                if self.stalled:
                    continue
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        deadline = self.loop.time() + self.patience
        while True:
            try:
                upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
                break
            except OSError:
                if self.loop.time() >= deadline:
                    client_writer.close()
                    return
                await asyncio.sleep(0.05)
        self.writers.update({client_writer, upstream_writer})
        await asyncio.gather(self._pipe(client_reader, upstream_writer), self._pipe(upstream_reader, client_writer))
        self.writers.difference_update({client_writer, upstream_writer})

    async def _start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _cut(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.close()
        for writer in list(self.writers):
            writer.transport.abort()
        self.writers.clear()
        if server is not None:
            await server.wait_closed()

    def start(self) -> int:
        self._call(self._start())
        return self.port

    def stall(self) -> None:
        self.stalled = True

    def cut(self) -> None:
        self._call(self._cut())

    def close(self) -> None:
        self.cut()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
