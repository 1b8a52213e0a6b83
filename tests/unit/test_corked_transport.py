"""The corked transport: what one turn of the loop writes leaves as one write, in order, and nothing is lost."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from controlplane_http.protocol import CorkedHttpProtocol, CorkedTransport


class FakeSocket:
    """A transport that records each hand-over to the socket."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.closing = False
        self.extra = {"peername": ("127.0.0.1", 5000)}

    def writelines(self, lines: list[bytes]) -> None:
        self.sent.append(b"".join(lines))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def get_extra_info(self, name: str) -> Any:
        return self.extra.get(name)


async def test_a_turns_writes_leave_together_at_its_end_in_order() -> None:
    sock = FakeSocket()
    corked = CorkedTransport(sock, asyncio.get_running_loop())
    corked.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    corked.write(b"")
    corked.write(bytearray(b"{}"))
    assert sock.sent == []
    await asyncio.sleep(0)  # the turn ends
    assert sock.sent == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"]
    corked.writelines([b"data: 1\n\n", b"data: 2\n\n"])
    await asyncio.sleep(0)
    corked.write(b"data: 3\n\n")
    await asyncio.sleep(0)
    assert sock.sent[1:] == [b"data: 1\n\ndata: 2\n\n", b"data: 3\n\n"]


async def test_a_close_sends_what_was_written_first_and_a_closed_socket_gets_nothing() -> None:
    sock = FakeSocket()
    corked = CorkedTransport(sock, asyncio.get_running_loop())
    corked.write(b"last words")
    corked.close()
    assert sock.sent == [b"last words"]
    assert sock.closing
    corked.write(b"too late")
    await asyncio.sleep(0)
    assert sock.sent == [b"last words"]
    assert corked.get_extra_info("peername") == ("127.0.0.1", 5000)  # the rest is the transport's own


async def test_uvicorn_serves_answers_and_streams_on_it() -> None:
    """A real server on loopback: a plain answer, and a stream whose parts arrive as they are written."""
    import httpx
    import uvicorn

    release = asyncio.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/stream":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"first\n", "more_body": True})
            await release.wait()
            await send({"type": "http.response.body", "body": b"second\n"})
            return
        body = b'{"ok":true}'
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 201, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()  # connections wait in the backlog until the server accepts them
    port = listening.getsockname()[1]
    config = uvicorn.Config(app, http=CorkedHttpProtocol, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            for _ in range(3):  # one connection, kept alive
                answer = await client.post("/x")
                assert (answer.status_code, answer.json()) == (201, {"ok": True})
            async with client.stream("GET", "/stream") as streamed:
                lines = streamed.aiter_lines()
                assert await anext(lines) == "first"  # arrived before the rest was written
                release.set()
                assert [line async for line in lines] == ["second"]
    finally:
        server.should_exit = True
        await serving
