"""End to end: the real server, the real reference worker and a fake OpenAI-compatible endpoint, on loopback."""

from __future__ import annotations

import json
import signal
import socket
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import FAST, Server, start_server, start_worker, stop_server
from tests.support import PATIENCE, SERVICE_KEY, wait_until

pytestmark = pytest.mark.e2e


def unique(prefix: str) -> str:
    """A name no other test on a shared server takes (environments', agents' and teams' names are unique)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def make_queue(client: httpx.Client, environment_name: str | None = None) -> str:
    environment = client.post("/api/v1/environments", json={"name": environment_name or unique("e2e")}).json()
    queue = client.post(f"/api/v1/environments/{environment['id']}/worker-queues", json={"name": "q"}).json()
    return str(queue["id"])


def make_agent(client: httpx.Client, name: str | None = None, **fields: Any) -> str:
    body = {"name": name or unique("writer"), "model_id": "fake-model", "system_prompt": "be brief", **fields}
    return str(client.post("/api/v1/agents", json=body).json()["id"])


def run(client: httpx.Client, agent_id: str, queue_id: str, prompt: str) -> dict[str, Any]:
    response = client.post(f"/api/v1/agents/{agent_id}/execute", json={"prompt": prompt, "worker_queue_id": queue_id})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def finished(client: httpx.Client, execution_id: str, timeout: float = PATIENCE) -> dict[str, Any]:
    state: dict[str, Any] = {}

    def done() -> bool:
        state.update(client.get(f"/api/v1/executions/{execution_id}").json())
        return state["status"] in ("completed", "failed", "cancelled", "timed_out")

    wait_until(done, timeout=timeout)
    return state


def sse(text: str) -> list[dict[str, str]]:
    frames = []
    for block in text.strip().split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line.startswith(":"):
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        if "id" in fields:
            frames.append(fields)
    return frames


def test_a_worker_completes_an_execution_with_the_models_text(
    tmp_path: Path, shared_server: Server, shared_fake_llm: str
) -> None:
    with shared_server.client() as client:
        queue_id = make_queue(client)
        agent_id = make_agent(client)
        worker = start_worker(tmp_path, shared_server, queue_id, shared_fake_llm, "w-completes")
        try:
            execution = run(client, agent_id, queue_id, "say hello")
            result = finished(client, execution["id"])
            assert result["status"] == "completed", result
            assert result["response"] == "[fake-model] be brief | say hello"
            assert result["usage"]["total_tokens"] > 0
            events = client.get(f"/api/v1/executions/{execution['id']}/events", params={"limit": 200}).json()["items"]
            chunks = "".join(e["data"]["text"] for e in events if e["type"] == "message_chunk")
            assert chunks == result["response"]
            assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
            assert events[-1]["type"] == "done"
            wait_until(lambda: client.get("/api/v1/workers/w-completes").json()["tasks_processed"] == 1)
        finally:
            assert worker.stop() == 0, worker.log.read_text()


def test_stream_true_answers_with_the_live_event_stream_and_resume_works(
    tmp_path: Path, shared_server: Server, shared_fake_llm: str
) -> None:
    with shared_server.client() as client:
        queue_id = make_queue(client)
        agent_id = make_agent(client)
        worker = start_worker(tmp_path, shared_server, queue_id, shared_fake_llm, "w-stream")
        try:
            body = {"prompt": "stream me", "worker_queue_id": queue_id, "stream": True}
            with client.stream("POST", f"/api/v1/agents/{agent_id}/execute", json=body, timeout=30) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                frames = sse("".join(response.iter_text()))
            assert [int(f["id"]) for f in frames] == list(range(1, len(frames) + 1))
            assert frames[0]["event"] == "status"
            assert frames[-1]["event"] == "done"
            assert '"status":"completed"' in frames[-1]["data"]
            execution_id = frames[0]["data"].split('"execution_id":"')[1].split('"')[0]
            text = "".join(
                f["data"].split('"text":"')[1].split('"')[0] for f in frames if f["event"] == "message_chunk"
            )
            assert text == "[fake-model] be brief | stream me"
            resume = {"Last-Event-ID": str(len(frames) - 2)}
            with client.stream("GET", f"/api/v1/executions/{execution_id}/stream", headers=resume) as again:
                tail = sse("".join(again.iter_text()))
            assert [f["id"] for f in tail] == [frames[-2]["id"], frames[-1]["id"]]
        finally:
            worker.stop()


def test_sse_follows_a_running_execution_with_keepalives(
    tmp_path: Path, shared_server: Server, shared_fake_llm: str
) -> None:
    with shared_server.client() as client:
        queue_id = make_queue(client)
        execution = run(client, make_agent(client), queue_id, "slow:15")
        worker = start_worker(tmp_path, shared_server, queue_id, shared_fake_llm, "w-follow")
        try:
            with client.stream("GET", f"/api/v1/executions/{execution['id']}/stream", timeout=30) as response:
                raw = "".join(response.iter_text())
            frames = sse(raw)
            assert [int(f["id"]) for f in frames] == list(range(1, len(frames) + 1))
            assert sum(1 for f in frames if f["event"] == "message_chunk") == 15
            assert frames[-1]["event"] == "done"
        finally:
            worker.stop()


def test_cancel_a_queued_and_a_running_execution(tmp_path: Path, shared_server: Server, shared_fake_llm: str) -> None:
    server, fake_llm = shared_server, shared_fake_llm
    with server.client() as client:
        queue_id = make_queue(client)
        agent_id = make_agent(client)
        queued = run(client, agent_id, queue_id, "never runs")
        assert client.post(f"/api/v1/executions/{queued['id']}/cancel").json()["status"] == "cancelled"
        running = run(client, agent_id, queue_id, "slow:200")
        worker = start_worker(tmp_path, server, queue_id, fake_llm, "w-cancel")
        try:
            wait_until(lambda: client.get(f"/api/v1/executions/{running['id']}").json()["last_event_seq"] >= 4)
            assert client.post(f"/api/v1/executions/{running['id']}/cancel").json()["cancel_requested"] is True
            result = finished(client, running["id"])
            assert result["status"] == "cancelled"
            assert result["attempt"] == 1
        finally:
            worker.stop()


def test_a_worker_killed_mid_task_is_replaced_and_the_task_finishes_once(
    tmp_path: Path, shared_server: Server, shared_fake_llm: str
) -> None:
    server, fake_llm = shared_server, shared_fake_llm
    with server.client() as client:
        queue_id = make_queue(client)
        execution = run(client, make_agent(client), queue_id, "slow:20")
        first = start_worker(tmp_path, server, queue_id, fake_llm, "doomed")
        wait_until(lambda: client.get(f"/api/v1/executions/{execution['id']}").json()["last_event_seq"] >= 4)
        first.stop(signal.SIGKILL)
        second = start_worker(tmp_path, server, queue_id, fake_llm, "rescuer")
        try:
            result = finished(client, execution["id"])
            assert result["status"] == "completed", result
            assert result["attempt"] == 2
            assert result["worker_id"] == "rescuer"
            events = client.get(f"/api/v1/executions/{execution['id']}/events", params={"limit": 200}).json()["items"]
            assert sum(1 for e in events if e["type"] == "done") == 1
            assert {e["attempt"] for e in events if e["type"] == "message_chunk"} == {1, 2}
            assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        finally:
            second.stop()


def test_an_llm_error_fails_the_execution_with_the_providers_message(
    tmp_path: Path, shared_server: Server, shared_fake_llm: str
) -> None:
    with shared_server.client() as client:
        queue_id = make_queue(client)
        execution = run(client, make_agent(client), queue_id, "please fail")
        worker = start_worker(tmp_path, shared_server, queue_id, shared_fake_llm, "w-llm-error")
        try:
            result = finished(client, execution["id"])
            assert result["status"] == "failed"
            assert "model overloaded, try later" in result["error"]
            assert "500" in result["error"]
        finally:
            worker.stop()


def test_a_team_runs_its_members_in_order(tmp_path: Path, shared_server: Server, shared_fake_llm: str) -> None:
    server, fake_llm = shared_server, shared_fake_llm
    with server.client() as client:
        queue_id = make_queue(client)
        first = make_agent(client, system_prompt="you are first")
        second = make_agent(client, system_prompt="you are second")
        team = client.post(
            "/api/v1/teams", json={"name": unique("crew"), "configuration": {"member_ids": [first, second]}}
        ).json()
        response = client.post(
            f"/api/v1/teams/{team['id']}/execute", json={"prompt": "plan", "worker_queue_id": queue_id}
        )
        worker = start_worker(tmp_path, server, queue_id, fake_llm, "w-team")
        try:
            result = finished(client, response.json()["id"])
            assert result["status"] == "completed", result
            assert result["response"].startswith("[fake-model] you are second / A teammate answered:")
            events = client.get(f"/api/v1/executions/{result['id']}/events", params={"limit": 200}).json()["items"]
            speakers = [e["data"]["agent_id"] for e in events if e["type"] == "message"]
            assert speakers == [first, second]
        finally:
            worker.stop()


def test_sigterm_lets_the_worker_finish_its_task_and_exit(
    tmp_path: Path, shared_server: Server, shared_fake_llm: str
) -> None:
    with shared_server.client() as client:
        queue_id = make_queue(client)
        execution = run(client, make_agent(client), queue_id, "slow:10")
        worker = start_worker(tmp_path, shared_server, queue_id, shared_fake_llm, "w-sigterm")
        wait_until(lambda: client.get(f"/api/v1/executions/{execution['id']}").json()["status"] == "running")
        assert worker.stop(signal.SIGTERM) == 0, worker.log.read_text()
        assert client.get(f"/api/v1/executions/{execution['id']}").json()["status"] == "completed"
        assert client.get("/api/v1/workers/w-sigterm").json()["reported_status"] == "offline"


def test_an_idle_stream_gets_keepalives_and_ends_on_cancel(shared_server: Server) -> None:
    with shared_server.client() as client, shared_server.client() as other:
        queue_id = make_queue(client)
        execution = run(client, make_agent(client), queue_id, "nobody will run this")
        seen: list[str] = []
        cancelled = False
        with client.stream("GET", f"/api/v1/executions/{execution['id']}/stream", timeout=30) as response:
            for chunk in response.iter_text():
                seen.append(chunk)
                if not cancelled and ": keep-alive" in "".join(seen):
                    assert other.post(f"/api/v1/executions/{execution['id']}/cancel").status_code == 200
                    cancelled = True
    text = "".join(seen)
    assert cancelled
    assert ": keep-alive" in text
    frames = sse(text)
    assert frames[-1]["event"] == "done"
    assert '"status":"cancelled"' in frames[-1]["data"]


def test_a_stream_resumed_at_or_past_the_end_leaves_the_next_streams_whole(shared_server: Server) -> None:
    """A browser reconnects after `done` with the last id (or a client sends one past the end, or absurdly long):
    its stream ends at once, and the streams opened after it on the node still get every event and the end (an
    idle stream, a keep-alive every second here, has missed them)."""
    with shared_server.client() as client:
        queue_id = make_queue(client)
        agent_id = make_agent(client)
        execution = run(client, agent_id, queue_id, "p")
        assert client.post(f"/api/v1/executions/{execution['id']}/cancel").status_code == 200
        path = f"/api/v1/executions/{execution['id']}/stream"

        def frames(headers: dict[str, str]) -> list[str]:
            text = ""
            with client.stream("GET", path, headers=headers) as response:
                assert response.status_code == 200
                for chunk in response.iter_text():
                    text += chunk
                    if ": keep-alive" in text:
                        break
            return [block.split("\n")[0] for block in text.split("\n\n") if block.startswith(("id:", ":"))]

        for last in ("3", "99999999999999999999", "9" * 5000):
            assert frames({"Last-Event-ID": last}) == []
            assert frames({}) == ["id: 1", "id: 2", "id: 3"]


def _server_read_everything_from(server: Server, client: socket.socket) -> None:
    """Wait until the server has read all that `client` sent (its socket's receive queue, in /proc/net/tcp, is
    empty): the request is in the server's hands."""
    server_port = int(server.url.rsplit(":", 1)[1])
    client_port = client.getsockname()[1]

    def read() -> bool:
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, queues = fields[1], fields[2], fields[4]
            if int(local.split(":")[1], 16) == server_port and int(remote.split(":")[1], 16) == client_port:
                return int(queues.split(":")[1], 16) == 0
        return False

    wait_until(read, interval=0.01)


def _request(server: Server, method: str, path: str, body: bytes = b"") -> socket.socket:
    """A request on a socket of its own (read it with `_read_to_end`: the server closes it after its answer)."""
    port = int(server.url.rsplit(":", 1)[1])
    connection = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {SERVICE_KEY}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    connection.sendall(head.encode() + body)
    return connection


def _read_to_end(connection: socket.socket) -> bytes:
    received = b""
    while chunk := connection.recv(65536):
        received += chunk
    connection.close()
    return received


def test_a_stop_answers_long_polls_and_ends_streams_at_once(tmp_path: Path) -> None:
    """SIGTERM: a worker's long poll answers 204 and an event stream ends with the end of its chunked body (the
    clients poll again and resume elsewhere), inside the grace period (10 s); cut at its end, the poll would be
    a 500 and the stream a truncated body."""
    server = start_server(tmp_path, f"sqlite+aiosqlite:///{tmp_path / 'stop.db'}", **FAST)
    try:
        with server.client() as client:
            queue_id = make_queue(client)
            execution = run(client, make_agent(client), queue_id, "nobody will run this")
            environment = client.post("/api/v1/environments", json={"name": "idle"}).json()
            idle = client.post(f"/api/v1/environments/{environment['id']}/worker-queues", json={"name": "idle"})
            other_queue = idle.json()["id"]  # empty: the long poll waits
        poll = _request(server, "POST", f"/api/v1/worker-queues/{other_queue}/lease",
                        json.dumps({"worker_id": "w1", "wait_seconds": 60}).encode())  # fmt: skip
        stream = _request(server, "GET", f"/api/v1/executions/{execution['id']}/stream")
        first = stream.recv(65536)
        assert first.startswith(b"HTTP/1.1 200"), first
        _server_read_everything_from(server, poll)
        server.process.send_signal(signal.SIGTERM)
        answered = _read_to_end(poll)
        streamed = first + _read_to_end(stream)
        server.process.wait(timeout=60)
    finally:
        stop_server(server)
    assert answered.startswith(b"HTTP/1.1 204"), answered
    assert streamed.endswith(b"0\r\n\r\n"), streamed[-200:]  # the chunked body's end: a stream ended, not cut
    assert "ending 2 long poll(s) and event stream(s)" in server.log.read_text()
