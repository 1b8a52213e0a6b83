"""Webhook deliveries a second: events written to the outbox (the domain's `emit`, a hundred a transaction), then
delivered by the app's own dispatcher (started with it, as `serve` starts it) to a receiver on loopback that
answers 204 at once (its own process), timed until the last delivery is recorded as succeeded.

    .venv/bin/python -m benchmarks.webhooks --database-url postgresql+asyncpg://postgres@127.0.0.1/bench
    .venv/bin/python -m benchmarks.webhooks --webhooks 10 --events 2000

With one webhook the deliveries go one at a time (each after the one before it succeeded: order per webhook);
with several, one of each webhook at once."""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import subprocess
import sys
import time
from dataclasses import replace

import sqlalchemy as sa

from benchmarks.inprocess import KEY, lifespan
from controlplane_adapters.settings.model import Settings
from controlplane_adapters.sql.engine import create_engine
from controlplane_domain.ports import Ports
from controlplane_domain.webhooks import usecases
from controlplane_domain.webhooks.events import emit
from controlplane_domain.webhooks.listeners import DUE
from controlplane_http.bootstrap import build_app

ORG = "default"
ANSWER = b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n"


async def receive(port: int) -> None:
    """The receiver: reads each request (headers, then its body), answers 204, keeps the connection."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)  # fmt: skip
                await reader.readexactly(length)
                writer.write(ANSWER)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


async def run(args: argparse.Namespace) -> None:
    engine = create_engine(args.database_url)
    try:
        settings = Settings(database_url=args.database_url, service_api_key=KEY, webhooks_allow_private=True,
                            secrets_key="YmVuY2gtd2ViaG9va3Mta2V5LTMyLWJ5dGVzLWxvbmc=")  # fmt: skip
        app = build_app(replace(settings, webhooks_deliver=False))  # the outbox first, then the dispatcher's time
        stop = await lifespan(app)
        ports: Ports = app.state["ports"]
        async with engine.begin() as connection:  # (a database used before: its webhooks go)
            await connection.execute(sa.text("DELETE FROM webhooks"))
        for number in range(args.webhooks):
            command = usecases.CreateWebhook(url=f"http://127.0.0.1:{args.port}/hook/{number}", events=("error",))
            await usecases.create_webhook(ports, ORG, command)
        started = time.perf_counter()
        for first in range(0, args.events, 100):
            async with ports.uow() as uow:
                for number in range(first, min(first + 100, args.events)):
                    await emit(ports, uow, ORG, "error", {"number": number}, ports.clock.now())
                await uow.commit()
        written = time.perf_counter() - started
        print(f"outbox: {args.events} events x {args.webhooks} webhook(s) written in {written:.2f} s")
        await stop()
        app = build_app(settings)  # the same database, delivering: its dispatcher starts with it
        stop = await lifespan(app)
        ports = app.state["ports"]
        total = args.events * args.webhooks
        started = time.perf_counter()
        if ports.bus is not None:
            await ports.bus.publish(DUE)
        query = sa.text("SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'")
        while True:
            async with engine.connect() as connection:
                done = (await connection.execute(query)).scalar_one()
            if done >= total:
                break
            await asyncio.sleep(0.05)
        spent = time.perf_counter() - started
        print(f"delivered: {total} in {spent:.2f} s: {total / spent:,.0f} deliveries/s")
        await stop()
    finally:
        await engine.dispose()


def listening(port: int, timeout: float = 30.0) -> None:
    """Returns once the receiver accepts connections."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default="postgresql+asyncpg://postgres@127.0.0.1/bench")
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--webhooks", type=int, default=1)
    parser.add_argument("--port", type=int, default=18_555)
    parser.add_argument("--receive", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.receive:
        asyncio.run(receive(args.receive))
        return
    logging.getLogger("httpx").setLevel(logging.WARNING)  # (a line a delivery otherwise)
    receiver = subprocess.Popen([sys.executable, "-m", "benchmarks.webhooks", "--receive", str(args.port)])
    try:
        listening(args.port)  # (a first delivery refused would hold back the rest for its back-off: seconds)
        asyncio.run(run(args))
    finally:
        receiver.terminate()


if __name__ == "__main__":
    main()
