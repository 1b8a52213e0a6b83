"""End to end: the reference worker against a misbehaving model provider and a control plane that goes away."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import FAST, Server, free_port, start_server, start_worker, stop_server
from tests.e2e.test_executions import finished, make_agent, make_queue, run, unique
from tests.support import PATIENCE, SERVICE_KEY, wait_until

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("not-a-chunk", "not a chat-completion chunk"),
        ("wrong-shape", "a chunk of the wrong shape"),
        ("html", "did not stream its answer (content type 'text/html"),
        ("error-in-stream", "LLM provider error in its stream: context length exceeded"),
        ("cut", "stream ended before the model finished"),
    ],
)
def test_a_provider_that_misbehaves_fails_the_execution_and_the_worker_goes_on(
    tmp_path: Path, shared_server: Server, shared_fake_llm: str, kind: str, error: str
) -> None:
    """Whatever the provider sends, the execution fails with what went wrong (never `completed` with a part or
    nothing), and the worker lives on to run the next execution (it crashed, and its restarts spent every attempt).
    (One server and one provider for the five kinds: each kind has its own queue, agent and worker.)"""
    server, fake_llm = shared_server, shared_fake_llm
    with server.client() as client:
        queue_id = make_queue(client, f"e2e-{kind}")
        agent_id = make_agent(client, f"writer-{kind}")
        bad = run(client, agent_id, queue_id, f"bad:{kind}")
        worker = start_worker(tmp_path, server, queue_id, fake_llm, f"w-{kind}")
        try:
            result = finished(client, bad["id"])
            assert (result["status"], result["attempt"]) == ("failed", 1), result
            assert error in result["error"]
            good = finished(client, run(client, agent_id, queue_id, "hello")["id"])
            assert (good["status"], good["worker_id"]) == ("completed", f"w-{kind}"), good
        finally:
            assert worker.stop() == 0, worker.log.read_text()


def test_a_model_that_takes_too_long_overall_fails_the_execution(
    tmp_path: Path, shared_server: Server, shared_fake_llm: str
) -> None:
    """The LLM timeout bounds the whole answer, not each read: a provider that keeps the stream alive with
    comments still fails after it."""
    server, fake_llm = shared_server, shared_fake_llm
    with server.client() as client:
        queue_id = make_queue(client)
        execution = run(client, make_agent(client), queue_id, "think:30")
        worker = start_worker(tmp_path, server, queue_id, fake_llm, "w-too-long", "--llm-timeout-seconds", "1")
        try:
            result = finished(client, execution["id"])
            assert result["status"] == "failed", result
            assert "did not finish its answer within 1 s" in result["error"]
        finally:
            worker.stop()


def test_a_cancel_stops_the_worker_while_the_model_is_still_thinking(
    tmp_path: Path, shared_server: Server, shared_fake_llm: str
) -> None:
    """The model would think for ten minutes; the cancel, delivered by a heartbeat, stops the task without waiting
    for its next token (within the wait's guard, a tenth of that)."""
    server, fake_llm = shared_server, shared_fake_llm
    with server.client() as client:
        queue_id = make_queue(client)
        execution = run(client, make_agent(client), queue_id, "think:600")
        worker = start_worker(tmp_path, server, queue_id, fake_llm, "w-cancel-thinking")
        try:
            path = f"/api/v1/executions/{execution['id']}"
            wait_until(lambda: client.get(path).json()["status"] == "running")
            assert client.post(f"{path}/cancel").status_code == 200
            result = finished(client, execution["id"])
            assert result["status"] == "cancelled", result
            assert result["error"] == "cancelled on request"
        finally:
            worker.stop()


def test_a_control_plane_restart_mid_task_costs_the_worker_nothing(tmp_path: Path, fake_llm: str) -> None:
    """The server stops while a task streams and comes back on the same port: the worker keeps its events and
    tries again until it answers, and finishes the task on its first attempt (it exited, or failed the execution
    blaming the model)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'restart.db'}"
    server = start_server(tmp_path, url)
    port = int(server.url.rsplit(":", 1)[1])
    try:
        with server.client() as client:
            queue_id = make_queue(client)
            execution = run(client, make_agent(client), queue_id, "slow:40")
        worker = start_worker(tmp_path, server, queue_id, fake_llm, "w1")
        with server.client() as client:
            wait_until(lambda: client.get(f"/api/v1/executions/{execution['id']}").json()["last_event_seq"] >= 4)
        stop_server(server)
        server = start_server(tmp_path, url, port=port)
        with server.client() as client:
            result = finished(client, execution["id"])
            assert (result["status"], result["attempt"]) == ("completed", 1), result
            assert result["response"] == "".join(f"part{i} " for i in range(40))
            events = client.get(f"/api/v1/executions/{execution['id']}/events", params={"limit": 200}).json()
            assert [e["data"]["text"] for e in events["items"] if e["type"] == "message_chunk"] == [
                f"part{i} " for i in range(40)
            ]
        assert worker.process.poll() is None, worker.log.read_text()
        assert worker.stop() == 0, worker.log.read_text()
    finally:
        stop_server(server)


def test_a_worker_started_before_the_control_plane_waits_for_it(tmp_path: Path, fake_llm: str) -> None:
    port = free_port()
    worker = start_worker(tmp_path, f"http://127.0.0.1:{port}", "00000000-0000-0000-0000-000000000000",
                          fake_llm, "early")  # fmt: skip
    server = start_server(tmp_path, f"sqlite+aiosqlite:///{tmp_path / 'late.db'}", port=port)
    try:
        with server.client() as client:
            wait_until(lambda: client.get("/api/v1/workers/early").status_code == 200)
        assert worker.process.poll() is None, worker.log.read_text()
    finally:
        worker.stop()
        stop_server(server)


@pytest.mark.parametrize("command", [["controlplane_http.cli", "worker"], ["controlplane_worker.cli"]])
@pytest.mark.parametrize(("flag", "value"), [("--wait-seconds", "90"), ("--wait-seconds", "-1"),
                                             ("--llm-timeout-seconds", "0"), ("--llm-header", "X-Only")])  # fmt: skip
def test_worker_settings_out_of_range_are_refused(tmp_path: Path, command: list[str], flag: str, value: str) -> None:
    """`controlplane worker` and `controlplane-worker` (the worker alone) read the same flags."""
    result = subprocess.run(
        [sys.executable, "-m", *command, "--api-url", "http://127.0.0.1:9",
         "--api-key", SERVICE_KEY, "--queue-id", "q", flag, value],
        capture_output=True, text=True, timeout=2 * PATIENCE, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert flag in result.stderr
    assert "configuration error" in result.stderr


def test_a_worker_with_a_wrong_key_exits_saying_so(tmp_path: Path, shared_server: Server, shared_fake_llm: str) -> None:
    server = shared_server
    result = subprocess.run(
        [sys.executable, "-m", "controlplane_http.cli", "worker", "--api-url", server.url,
         "--api-key", "cpk_wrong", "--queue-id", "q", "--llm-base-url", shared_fake_llm],
        capture_output=True, text=True, timeout=2 * PATIENCE, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "the control plane refused this worker" in result.stderr
    assert "401" in result.stderr
    httpx.get(server.url)  # (the server is still up)


def test_the_worker_runs_with_a_worker_key_from_the_cli_and_not_with_a_member_key(
    tmp_path: Path, shared_server: Server, shared_fake_llm: str
) -> None:
    """A lease carries secret values: a worker on a member key is refused at its first lease and exits 2 naming
    the key it needs; one on a worker key issued by `controlplane api-keys create --role worker`, bound to its
    queue, runs the execution."""
    server, fake_llm = shared_server, shared_fake_llm
    environment_name = unique("e2e")
    with server.client() as client:
        queue_id = make_queue(client, environment_name)
        execution = run(client, make_agent(client), queue_id, "hello")
        member = client.post("/api/v1/api-keys", json={"name": "people", "role": "member"}).json()["key"]
    refused = subprocess.run(
        [sys.executable, "-m", "controlplane_http.cli", "worker", "--api-url", server.url, "--api-key", member,
         "--queue-id", queue_id, "--llm-base-url", fake_llm, "--worker-id", "w-member"],
        capture_output=True, text=True, timeout=2 * PATIENCE, check=False,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    assert "403" in refused.stderr
    assert "--role worker" in refused.stderr
    created = subprocess.run(
        [sys.executable, "-m", "controlplane_http.cli", "api-keys", "create", "--org", "default", "--name", "w",
         "--role", "worker", "--queue-id", queue_id],
        env={**os.environ, "CONTROLPLANE_DATABASE_URL": server.database_url},
        cwd=tmp_path, capture_output=True, text=True, timeout=2 * PATIENCE, check=False,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]
    worker = start_worker(
        tmp_path, server, queue_id, fake_llm, "w-key", "--api-key", key, "--environment", environment_name
    )
    try:
        with server.client() as client:
            result = finished(client, execution["id"])
            assert (result["status"], result["worker_id"]) == ("completed", "w-key"), result
            shown = client.get("/api/v1/api-keys", params={"limit": 200}).json()["items"]
            assert [(k["name"], k["role"]) for k in shown if k["queue_ids"] == [queue_id]] == [("w", "worker")]
    finally:
        assert worker.stop() == 0, worker.log.read_text()


def test_a_task_whose_events_the_server_refuses_is_failed_saying_why(tmp_path: Path, fake_llm: str) -> None:
    """The server takes bodies of at most 2 KB and the answer is larger: its events are refused (413). The worker
    fails the execution with the refusal (it kept heartbeating while the execution stayed running forever) and
    goes on with the next."""
    server = start_server(tmp_path, f"sqlite+aiosqlite:///{tmp_path / 'small.db'}",
                          CONTROLPLANE_MAX_BODY_BYTES="2048", **FAST)  # fmt: skip
    try:
        with server.client() as client:
            queue_id = make_queue(client)
            talker = make_agent(client, "talker", system_prompt="x" * 1500)  # answers with its system prompt
            worker = start_worker(tmp_path, server, queue_id, fake_llm, "w1")
            try:
                result = finished(client, run(client, talker, queue_id, "y" * 500)["id"])
                assert result["status"] == "failed", result
                assert "the control plane refused this execution's events or completion" in result["error"]
                assert "413" in result["error"]
                good = finished(client, run(client, make_agent(client, "brief"), queue_id, "hello")["id"])
                assert (good["status"], good["worker_id"]) == ("completed", "w1"), good
            finally:
                assert worker.stop() == 0, worker.log.read_text()
    finally:
        stop_server(server)


def test_a_second_signal_ends_a_worker_that_waits_for_a_control_plane_gone_away(tmp_path: Path, fake_llm: str) -> None:
    """The server dies while the worker finishes a task: the worker retries its completion for as long as it
    takes. A first SIGTERM lets it finish; a second abandons the task, and the worker exits (it kept retrying)."""
    server = start_server(tmp_path, f"sqlite+aiosqlite:///{tmp_path / 'gone.db'}")
    with server.client() as client:
        queue_id = make_queue(client)
        execution = run(client, make_agent(client), queue_id, "think:1")
    worker = start_worker(tmp_path, server, queue_id, fake_llm, "w1")
    try:
        with server.client() as client:
            wait_until(lambda: client.get(f"/api/v1/executions/{execution['id']}").json()["status"] == "running")
        server.process.kill()
        server.process.wait()
        wait_until(lambda: "/complete failed" in worker.log.read_text() or "/events failed" in worker.log.read_text())
        worker.process.send_signal(signal.SIGTERM)
        wait_until(lambda: "finishing the running task first" in worker.log.read_text())  # (one signal at a time)
        worker.process.send_signal(signal.SIGTERM)
        assert worker.process.wait(timeout=30) == 0, worker.log.read_text()
        assert "abandoned on a second stop signal" in worker.log.read_text()
    finally:
        worker.stop()
        stop_server(server)


def test_a_lease_shorter_than_the_idle_heartbeat_period_is_kept_alive(tmp_path: Path, fake_llm: str) -> None:
    """Leases of 3 s, heartbeats every 10 s while idle (a third of 30): a task that starts wakes the heartbeat
    loop, which keeps the lease's pace from then on (the lease expired before the first heartbeat of the task and
    the attempt was lost)."""
    server = start_server(tmp_path, f"sqlite+aiosqlite:///{tmp_path / 'short.db'}",
                          CONTROLPLANE_LEASE_TIMEOUT_SECONDS="3")  # fmt: skip
    try:
        with server.client() as client:
            queue_id = make_queue(client)
            agent_id = make_agent(client)
            worker = start_worker(tmp_path, server, queue_id, fake_llm, "w1")
            try:
                wait_until(lambda: client.get("/api/v1/workers/w1").status_code == 200)
                result = finished(client, run(client, agent_id, queue_id, "think:7")["id"])
                assert (result["status"], result["attempt"]) == ("completed", 1), result
            finally:
                assert worker.stop() == 0, worker.log.read_text()
    finally:
        stop_server(server)
