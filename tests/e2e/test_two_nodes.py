"""Two `controlplane serve` processes on one Postgres behave as one service (LISTEN/NOTIFY fan-out)."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.databases import truncate
from tests.e2e.conftest import FAST, Server, start_server, start_worker, stop_server
from tests.e2e.test_executions import (
    _read_to_end,
    _request,
    _server_read_everything_from,
    make_agent,
    make_queue,
    sse,
)
from tests.support import SERVICE_KEY, bearer, wait_for_answer

pytestmark = pytest.mark.e2e


@pytest.fixture
def nodes(tmp_path: Path, postgres_url: str) -> Iterator[tuple[Server, Server]]:
    asyncio.run(truncate(postgres_url))
    first = start_server(tmp_path, postgres_url, **FAST)
    second = start_server(tmp_path, postgres_url, **FAST)
    try:
        yield first, second
    finally:
        stop_server(first)
        stop_server(second)


def test_work_created_on_one_node_is_leased_on_the_other_at_once(nodes: tuple[Server, Server]) -> None:
    """A long poll of 60 s waits on the second node (its request read by the server: it is in the server's hands
    before the work exists); the work is created on the first; the poll answers with it well before its timer."""
    first, second = nodes
    with first.client() as a:
        queue_id = make_queue(a)
        agent_id = make_agent(a)
        body = json.dumps({"worker_id": "w", "wait_seconds": 60}).encode()
        waiting = _request(second, "POST", f"/api/v1/worker-queues/{queue_id}/lease", body)
        _server_read_everything_from(second, waiting)
        started = time.monotonic()
        created = a.post(f"/api/v1/agents/{agent_id}/execute", json={"prompt": "hi", "worker_queue_id": queue_id})
        assert created.status_code == 201
        answer = _read_to_end(waiting)
        elapsed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert b'"prompt":"hi"' in answer, answer
    # the notification crosses within milliseconds; half the timer leaves a busy machine room, and fails a wake-up
    # by the timer
    assert elapsed < 30, "the long poll was woken by the notification, not by its 60 s timer"


def test_an_execution_streams_live_on_either_node(tmp_path: Path, nodes: tuple[Server, Server], fake_llm: str) -> None:
    first, second = nodes
    with first.client() as a:
        queue_id = make_queue(a)
        agent_id = make_agent(a)
        created = a.post(f"/api/v1/agents/{agent_id}/execute", json={"prompt": "slow:10", "worker_queue_id": queue_id})
        execution_id = created.json()["id"]

    async def follow(node: Server, connected: asyncio.Event) -> str:
        async with (
            httpx.AsyncClient(base_url=node.url, headers=bearer(SERVICE_KEY), timeout=60) as client,
            client.stream("GET", f"/api/v1/executions/{execution_id}/stream") as response,
        ):
            chunks = []
            async for chunk in response.aiter_text():
                chunks.append(chunk)
                connected.set()
            return "".join(chunks)

    async def scenario() -> list[str]:
        ready = [asyncio.Event(), asyncio.Event()]
        readers = [asyncio.create_task(follow(node, event)) for node, event in zip(nodes, ready, strict=True)]
        for event in ready:
            await event.wait()
        worker = start_worker(tmp_path, second, queue_id, fake_llm, "worker-on-b")  # both streams are open now
        try:
            return list(await asyncio.gather(*readers))
        finally:
            worker.stop()

    for raw in asyncio.run(scenario()):
        frames = sse(raw)
        assert frames[-1]["event"] == "done"
        assert sum(1 for f in frames if f["event"] == "message_chunk") == 10
        assert [int(f["id"]) for f in frames] == list(range(1, len(frames) + 1))


def test_serve_with_several_worker_processes(tmp_path: Path, postgres_url: str) -> None:
    asyncio.run(truncate(postgres_url))
    from tests.e2e.conftest import free_port, spawn

    port = free_port()
    env = {"SERVICE_API_KEY": SERVICE_KEY, "CONTROLPLANE_DATABASE_URL": postgres_url}
    proc = spawn(["-m", "controlplane_http.cli", "serve", "--port", str(port), "--workers", "2"],
                 tmp_path / "multi.log", env)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"

        wait_for_answer(lambda http: http.get(f"{url}/api/health", headers=bearer(SERVICE_KEY)))
        with httpx.Client(base_url=url, headers=bearer(SERVICE_KEY)) as client:
            created = [client.post("/api/v1/agents", json={"name": f"multi-{i}"}).status_code for i in range(20)]
            assert created == [201] * 20
            assert client.get("/api/v1/agents").json()["total"] == 20
        assert (
            "Started parent process" in proc.log.read_text()
            or proc.log.read_text().count("Started server process") >= 2
        )
    finally:
        status = proc.stop(signal.SIGTERM)
    log = proc.log.read_text()
    assert status == 0, log  # the supervisor, once both server processes stopped cleanly
    assert log.count("Application shutdown complete") == 2, log
    assert "Stopping parent process" in log


def test_several_workers_on_sqlite_are_refused(tmp_path: Path) -> None:
    from tests.e2e.test_server import run_cli

    result = run_cli("serve", "--workers", "2", env={"CONTROLPLANE_DATABASE_URL": "sqlite+aiosqlite:///x.db"},
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2
    assert "needs Postgres" in result.stderr


def test_a_key_revoked_on_one_node_is_refused_by_the_other_at_once(nodes: tuple[Server, Server]) -> None:
    first, second = nodes
    with first.client() as a, second.client() as b:
        created = a.post("/api/v1/api-keys", json={"name": "roaming", "role": "member"}).json()
        key = bearer(created["key"])
        for _ in range(3):  # now remembered by the second node
            assert b.get("/api/v1/agents", headers=key).status_code == 200
        assert a.delete(f"/api/v1/api-keys/{created['id']}").status_code == 204
        from tests.support import wait_until

        # the NOTIFY crosses between nodes within milliseconds; the deadline bounds a broken fan-out, and stays
        # under the 60 s a remembered key would otherwise live in the second node's cache (TOKEN_CACHE_SECONDS)
        wait_until(lambda: b.get("/api/v1/agents", headers=key).status_code == 401, timeout=30)
        assert a.get("/api/v1/agents", headers=key).status_code == 401
