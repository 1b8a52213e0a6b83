"""The reference worker's client side, against scripted control-plane answers (an httpx transport that answers
as the service would): what it retries, what it fails, what it survives."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable

import httpx
import msgspec
import pytest

from controlplane_worker import control_plane
from controlplane_worker.config import WorkerConfig
from controlplane_worker.tasks import Task, TaskRun, plan_json
from controlplane_worker.worker import VERSION, ReferenceWorker

Answer = Callable[[httpx.Request], httpx.Response]


def worker_on(answers: list[Answer], seen: list[httpx.Request]) -> ReferenceWorker:
    """A worker whose control plane gives `answers` in turn (the last one from then on)."""

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers[min(len(seen), len(answers)) - 1](request)

    worker = ReferenceWorker(WorkerConfig(api_url="http://cp", api_key="k", queue_id="q", worker_id="w"))
    worker.control_plane.api = httpx.AsyncClient(base_url="http://cp", transport=httpx.MockTransport(handle))
    return worker


def beat(interval: int = 30, **fields: object) -> Answer:
    """A heartbeat's answer, whole (the worker reads it as the client's typed `HeartbeatResponse`)."""
    answer = {"worker_id": "w", "organization_id": "o", "status": "idle", "registered": False,
              "received_at": "2026-01-01T00:00:00Z", "heartbeat_interval_seconds": interval,
              "offline_after_seconds": interval * 3, **fields}  # fmt: skip
    return lambda _request: httpx.Response(200, json=answer)


def envelope(status: int, code: str) -> Answer:
    return lambda _request: httpx.Response(status, json={"error": {"code": code, "message": code.lower()}})


async def test_a_concurrent_update_is_tried_again_and_a_stale_attempt_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(control_plane, "RETRY_FIRST_SECONDS", 0.01)  # (the first retry waits 0.5 s otherwise)
    seen: list[httpx.Request] = []
    worker = worker_on([envelope(409, "CONCURRENT_UPDATE"), lambda _r: httpx.Response(200, json={"ok": 1})], seen)
    answer = await worker.control_plane.post("/api/v1/executions/e/events", {"events": []})
    assert (answer.status_code, len(seen)) == (200, 2)
    seen.clear()
    stale = worker_on([envelope(409, "STALE_ATTEMPT")], seen)
    assert (await stale.control_plane.post("/api/v1/executions/e/events", {"events": []})).status_code == 409
    assert len(seen) == 1


async def test_a_lease_answer_of_the_wrong_shape_fails_the_execution_not_the_worker() -> None:
    worker = worker_on([lambda _r: httpx.Response(200, json={})], [])
    run = TaskRun(Task("e", 1), worker.config, worker.control_plane, worker.model)
    outcome = await run.work({"execution": {"id": "e"}, "attempt": 1, "agent": {"id": "a"}})  # no prompt
    assert outcome[0] == "failed"
    assert outcome[2] == "the worker failed: KeyError('prompt')"
    assert run.task.pending == [{"type": "error", "data": {"message": "the worker failed: KeyError('prompt')"}}]


async def test_the_heartbeat_loop_outlives_an_answer_that_is_not_json() -> None:
    seen: list[httpx.Request] = []
    html: Answer = lambda _r: httpx.Response(200, text="<html>a proxy's page</html>")  # noqa: E731
    worker = worker_on([html, beat(1)], seen)
    worker.heartbeat_interval = 0.6  # a heartbeat every 0.2 s (then every third of a second)
    beating = asyncio.ensure_future(worker.heartbeat_loop())
    try:
        for _ in range(200):
            if len(seen) >= 3:
                break
            await asyncio.sleep(0.05)
    finally:
        beating.cancel()
        await asyncio.gather(beating, return_exceptions=True)
    assert len(seen) >= 3, "the loop stopped after the answer it could not read"
    assert json.loads(seen[-1].content)["status"] == "idle"


async def test_a_heartbeat_tells_the_runners_view_its_host_version_and_capacity() -> None:
    seen: list[httpx.Request] = []
    worker = worker_on([beat(30)], seen)
    await worker.heartbeat()
    metadata = json.loads(seen[0].content)["worker_metadata"]
    assert metadata["hostname"] == socket.gethostname()
    assert (metadata["version"], metadata["capacity"], metadata["queue_id"]) == (VERSION, 1, "q")
    assert VERSION[0].isdigit()  # the installed package's version


async def test_a_heartbeats_answer_is_read_typed_its_cancel_reaches_the_running_task() -> None:
    worker = worker_on([beat(12, commands=[{"type": "cancel", "execution_id": "e-1"}])], [])
    worker.task = Task("e-1", 1)
    await worker.heartbeat()
    assert worker.heartbeat_interval == 12.0
    assert worker.task.cancelled.is_set()
    worker.task = Task("e-2", 1)
    await worker.heartbeat()  # a cancel of another execution leaves this one alone
    assert not worker.task.cancelled.is_set()
    wrong = worker_on([lambda _r: httpx.Response(200, json={"heartbeat_interval_seconds": "soon"})], [])
    with pytest.raises(msgspec.ValidationError):  # (the heartbeat loop logs it and goes on: the test above)
        await wrong.heartbeat()


def _model_on(worker: ReferenceWorker, seen: list[httpx.Request]) -> None:
    """The worker's model endpoint answers one chunk and [DONE], keeping each request it gets."""

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        chunk = {"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}
        body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

    worker.model.llm = httpx.AsyncClient(base_url="http://llm", transport=httpx.MockTransport(handle))


RESOLVED = {
    "context": {"instructions": "Be brief.", "knowledge": [{"name": "kb", "text": "Facts."},
                                                           {"name": "far", "uri": "https://x"}]},
    "env_vars": {"OPENAI_API_KEY": "sk-tenant", "ORG": "acme", "REGION": "eu"},
    "secrets": {"ORG": "from-secret", "PROXY_KEY": "pk-1"},
}  # fmt: skip


async def test_the_resolved_context_joins_the_system_prompt_and_the_environment_reaches_the_model_call() -> None:
    worker = worker_on([lambda _r: httpx.Response(200, json={})], [])
    worker.config.llm_api_key = "worker-own"
    worker.config.llm_env_headers = {"X-Org": "ORG", "X-Proxy-Key": "PROXY_KEY", "X-Absent": "NOT_SET"}
    worker.model.config = worker.config
    seen: list[httpx.Request] = []
    _model_on(worker, seen)
    run = TaskRun(Task("e", 1), worker.config, worker.control_plane, worker.model)
    agent = {"id": "a", "system_prompt": "You are terse."}
    outcome = await run.work({"execution": {"id": "e", "prompt": "hi"}, "agent": agent, "resolved": RESOLVED})
    assert outcome[:2] == ("completed", "ok")
    body = json.loads(seen[0].content)
    assert body["messages"][0] == {"role": "system", "content": "You are terse.\n\nBe brief.\n\nkb:\nFacts."}
    headers = seen[0].headers
    assert (headers["authorization"], headers["x-org"], headers["x-proxy-key"]) == ("Bearer sk-tenant", "acme", "pk-1")
    assert "x-absent" not in headers
    assert all("sk-tenant" not in json.dumps(event) for event in run.task.pending)


async def test_a_team_member_runs_with_its_own_environment_and_a_bad_header_value_is_not_shown() -> None:
    worker = worker_on([lambda _r: httpx.Response(200, json={})], [])
    seen: list[httpx.Request] = []
    _model_on(worker, seen)
    run = TaskRun(Task("e", 1), worker.config, worker.control_plane, worker.model)
    team = {"agents": [{"id": "m1"}, {"id": "m2"}], "configuration": {}}
    resolved = {"context": {"instructions": "Together."}, "env_vars": {"OPENAI_API_KEY": "team-key"},
                "members": [{"agent_id": "m1", "env_vars": {"OPENAI_API_KEY": "m1-key"}}]}  # fmt: skip
    outcome = await run.work({"execution": {"id": "e", "prompt": "hi"}, "team": team, "resolved": resolved})
    assert outcome[0] == "completed"
    assert [r.headers["authorization"] for r in seen] == ["Bearer m1-key", "Bearer team-key"]
    assert all(json.loads(r.content)["messages"][0]["content"] == "Together." for r in seen)
    broken = {"env_vars": {"OPENAI_API_KEY": "line\nbreak-secret"}}
    failed = await run.work({"execution": {"id": "e", "prompt": "hi"}, "agent": {"id": "a"}, "resolved": broken})
    assert failed[0] == "failed"
    assert "OPENAI_API_KEY" in (failed[2] or "")
    assert "break-secret" not in json.dumps(run.task.pending)


async def test_a_planning_lease_asks_the_model_in_json_mode_with_the_catalog() -> None:
    worker = worker_on([lambda _r: httpx.Response(200, json={})], [])
    seen: list[httpx.Request] = []
    _model_on(worker, seen)
    run = TaskRun(Task("e", 1), worker.config, worker.control_plane, worker.model)
    planning = {"plan_id": "p", "task": "write it", "instructions": "Plan it.", "plan_schema": {},
                "agents": [{"id": "a1", "name": "writer"}], "teams": []}  # fmt: skip
    resolved = {"context": {"instructions": "Be brief."}, "planning": planning}
    outcome = await run.work({"execution": {"id": "e", "prompt": "write it"}, "agent": None, "resolved": resolved})
    assert outcome[:2] == ("completed", "ok")  # (an answer that holds no JSON object is sent as it is)
    body = json.loads(seen[0].content)
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"] == [
        {"role": "system", "content": "Plan it."},
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": json.dumps({"agents": [{"id": "a1", "name": "writer"}], "teams": []})},
        {"role": "user", "content": "write it"},
    ]


@pytest.mark.parametrize(
    ("answer", "plan"),
    [
        ('{"summary": "s"}', '{"summary": "s"}'),
        (
            'Sure:\n```json\n{"summary": "s", "steps": [{"id": "a"}]}\n```\nDone.',
            '{"summary": "s", "steps": [{"id": "a"}]}',
        ),
        ("no plan {here}", "no plan {here}"),
        ("[1, 2]", "[1, 2]"),
    ],
)
def test_the_plan_is_the_json_object_of_the_models_answer(answer: str, plan: str) -> None:
    assert plan_json(answer) == plan
