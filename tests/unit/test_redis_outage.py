"""A Redis that accepts connections and never answers costs one request its (short) timeout, then the limiter
leaves it alone for a while: requests are admitted without asking it."""

from __future__ import annotations

import asyncio

from controlplane_adapters.ratelimit import RateLimiter


async def test_a_silent_redis_is_asked_once_a_pause() -> None:
    connections: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)  # accepts, reads nothing, answers nothing

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        limiter = RateLimiter(f"redis://127.0.0.1:{port}", redis_timeout=0.2, redis_pause=3600)
        first = await limiter.hit("api:key", 5)
        assert (first.allowed, first.remaining) == (True, 5)
        assert len(connections) == 1, "the first request asked Redis"
        later = [await limiter.hit("api:key", 5) for _ in range(20)]
        assert all(decision.allowed for decision in later)
        assert len(connections) == 1, "nobody asked Redis again during the pause"
    finally:
        for writer in connections:
            writer.close()
        server.close()
        await server.wait_closed()
