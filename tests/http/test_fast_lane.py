"""The fast lane answers exactly as Litestar's path does, and hands it everything but the plain case."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from litestar import Controller, Litestar, delete, get
from litestar.params import FromPath, FromQuery
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_http.bootstrap import build_app
from controlplane_http.fastlane.lane import FastLane
from controlplane_http.fastlane.routes import HOT_OPERATIONS
from controlplane_http.middleware import SecurityMiddleware
from controlplane_http.operations.requests import Observed
from tests.conftest import app_settings
from tests.support import DEFAULT_ORG, SERVICE_KEY, bearer, make_jwt

VIEWER = bearer(make_jwt(DEFAULT_ORG, sub="viewer", roles=["viewer"]))
OTHER = bearer(make_jwt("org-other", sub="intruder"))
JSON = {"content-type": "application/json"}


def heartbeat_body(worker_id: str, **fields: Any) -> dict[str, Any]:
    return {"worker_id": worker_id, "environment_name": "prod", **fields}


Pair = tuple[TestClient[Any], TestClient[Any], dict[str, str]]


def _pair(directory: Path) -> Iterator[Pair]:
    """Two apps on one SQLite file and one clock, with and without the lane, and the ids of two agents."""
    clock = ManualClock()
    url = f"sqlite+aiosqlite:///{directory / 'lane.db'}"
    with_lane = build_app(app_settings(url), clock=clock)
    without_lane = build_app(replace(app_settings(url), fast_lane=False), clock=clock)
    with TestClient(with_lane) as fast, TestClient(without_lane) as slow:
        for client in (fast, slow):
            client.headers.update(bearer(SERVICE_KEY))
        ids = {}
        for i in range(25):
            created = fast.post("/api/v1/agents", json={"name": f"agent-{i:02d}", "configuration": {"n": i}})
            assert created.status_code == 201, created.text
            ids.setdefault("first", created.json()["id"])
        other = fast.post("/api/v1/agents", json={"name": "theirs"}, headers=OTHER)
        ids["theirs"] = other.json()["id"]
        ids["FIRST"], ids["THEIRS"] = ids["first"].upper(), ids["theirs"].upper()  # ids read in any case
        yield fast, slow, ids


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    yield from _pair(tmp_path)


@pytest.fixture(scope="module")
def reading_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """One pair for the tests that only read (a GET changes nothing either app answers)."""
    yield from _pair(tmp_path_factory.mktemp("lane"))


def security_of(app: Litestar) -> SecurityMiddleware:
    """The security middleware, under the outermost one (request ids and metrics)."""
    observed = app.asgi_handler
    assert isinstance(observed, Observed)
    assert isinstance(observed.app, SecurityMiddleware)
    return observed.app


def lane_of(app: Litestar) -> FastLane:
    security = security_of(app)
    assert isinstance(security.app, FastLane)
    return security.app


def handed_on(app: Any) -> list[str]:
    """The requests the app's lane hands to Litestar from now on, as "METHOD path?query"."""
    lane = lane_of(app)
    handed: list[str] = []
    behind = lane.app

    async def litestar(scope: Any, receive: Any, send: Any) -> None:
        query = scope["query_string"].decode()
        handed.append(f"{scope['method']} {scope['path']}" + (f"?{query}" if query else ""))
        await behind(scope, receive, send)

    lane.app = litestar
    return handed


def answer(response: Any) -> tuple[int, str | None, Any, set[str]]:
    """What a caller sees, less the rate-limit counters (each app counts its own requests)."""
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and "request_id" in error.get("details", {}):
        error["details"]["request_id"] = "..."
    names = {name.lower() for name in response.headers if not name.lower().startswith("x-ratelimit")}
    return response.status_code, response.headers.get("content-type"), body, names


GETS = [
    ("/api/v1/agents/{first}", {}),
    ("/api/v1/agents/{first}", VIEWER),
    ("/api/v1/agents/{theirs}", {}),
    ("/api/v1/agents/{theirs}", OTHER),
    ("/api/v1/agents/{FIRST}", {}),
    ("/api/v1/agents/{FIRST}", VIEWER),
    ("/api/v1/agents/{THEIRS}", {}),
    ("/api/v1/agents/{THEIRS}", OTHER),
    ("/api/v1/agents/no-such-agent", {}),
    ("/api/v1/agents/{first}?limit=5", {}),
    ("/api/v1/agents/{first}/", {}),
    ("/api/v1/agents", {}),
    ("/api/v1/agents?limit=20", {}),
    ("/api/v1/agents?limit=20&offset=3", {}),
    ("/api/v1/agents?offset=24", {}),
    ("/api/v1/agents?offset=100", {}),
    ("/api/v1/agents?limit=0", {}),
    ("/api/v1/agents?limit=101", {}),
    ("/api/v1/agents?limit=100", {}),
    ("/api/v1/agents?limit=007", {}),
    ("/api/v1/agents?offset=00", {}),
    ("/api/v1/agents?offset=0", {}),
    ("/api/v1/agents?limit=-1", {}),
    ("/api/v1/agents?limit=abc", {}),
    ("/api/v1/agents?limit=", {}),
    ("/api/v1/agents?limit", {}),
    ("/api/v1/agents?limit=5&limit=6", {}),
    ("/api/v1/agents?limit=5&", {}),
    ("/api/v1/agents?limit=99999999999", {}),
    ("/api/v1/agents?lim%69t=5", {}),
    ("/api/v1/agents?colour=red", {}),
    ("/api/v1/agents", VIEWER),
    ("/api/v1/agents", OTHER),
]


@pytest.mark.parametrize(("path", "headers"), GETS)
def test_reads_answer_the_same_with_and_without_the_lane(
    reading_pair: Pair, path: str, headers: dict[str, str]
) -> None:
    fast, slow, ids = reading_pair
    path = path.format(**ids)
    assert answer(fast.get(path, headers=headers)) == answer(slow.get(path, headers=headers))


HEARTBEATS: list[tuple[Any, dict[str, str]]] = [
    (heartbeat_body("{w}", tasks_processed=3, worker_metadata={"host": "a"}), JSON),
    (heartbeat_body("{w}", status="busy", current_task_id="t-1"), JSON),
    (heartbeat_body("{w}"), {"content-type": "application/json; charset=utf-8"}),
    (heartbeat_body("{w}"), {"content-type": "text/plain"}),
    (heartbeat_body("{w}"), {**JSON, "idempotency-key": "k-{w}"}),
    (heartbeat_body("{w}"), {**JSON, **VIEWER}),
    (heartbeat_body("{w}", tasks_processed=-1), JSON),
    (heartbeat_body("{w}", tasks_processed=2**63), JSON),
    (heartbeat_body("{w}", colour="red"), JSON),
    (heartbeat_body("{w}", worker_metadata={"x": "a\u0000b"}), JSON),
    ({"environment_name": "prod"}, JSON),
    (b'{"worker_id": "{w}", "environment_name": ', JSON),
    (b'{"worker_id": "{w}", "environment_name": "caf\xe9"}', JSON),  # not UTF-8
    (
        b'{"worker_id": "{w}", "environment_name": "prod", "worker_metadata": {"a": '
        + b"[" * 20000
        + b"]" * 20000
        + b"}}",
        JSON,
    ),
    (b"", JSON),
    ([heartbeat_body("{w}")], JSON),
]


@pytest.mark.parametrize(("body", "headers"), HEARTBEATS)
def test_heartbeats_answer_the_same_with_and_without_the_lane(
    pair: tuple[TestClient[Any], TestClient[Any], dict[str, str]], body: Any, headers: dict[str, str]
) -> None:
    fast, slow, _ = pair
    answers = []
    for client, worker in ((fast, "w-fast"), (slow, "w-slow")):
        for _ in range(2):  # the first registers the worker, the second does not
            sent = {name: value.replace("{w}", worker) for name, value in headers.items()}
            if isinstance(body, bytes):
                raw = body.replace(b"{w}", worker.encode())
            else:
                raw = json.dumps(body).replace("{w}", worker).encode()
            response = client.post("/api/v1/workers/heartbeat", content=raw, headers=sent)
            status, kind, decoded, names = answer(response)
            if isinstance(decoded, dict) and decoded.get("worker_id") == worker:
                decoded["worker_id"] = "w"
            answers.append((status, kind, decoded, names))
    assert answers[:2] == answers[2:]


def test_the_lane_serves_the_plain_requests_and_hands_on_the_rest(
    pair: tuple[TestClient[Any], TestClient[Any], dict[str, str]],
) -> None:
    fast, _, ids = pair
    handed = handed_on(fast.app)
    plain = [
        fast.get(f"/api/v1/agents/{ids['first']}"),
        fast.get("/api/v1/agents?limit=20&offset=1"),
        fast.get("/api/v1/agents", headers=VIEWER),
        fast.post("/api/v1/workers/heartbeat", json=heartbeat_body("w-1")),
        fast.get("/api/v1/agents/no-such-agent"),  # 404 from the handler, answered in the lane
    ]
    assert [r.status_code for r in plain] == [200, 200, 200, 200, 404]
    assert handed == []
    fast.get("/api/v1/agents?limit=0")
    fast.get("/api/v1/agents?colour=red")
    fast.post("/api/v1/workers/heartbeat", json=heartbeat_body("w-1"), headers=VIEWER)
    fast.post("/api/v1/workers/heartbeat", json={"worker_id": "w-1"})
    fast.post("/api/v1/agents", json={"name": "not-hot"})
    fast.head(f"/api/v1/agents/{ids['first']}")
    assert handed == [
        "GET /api/v1/agents?limit=0",
        "GET /api/v1/agents?colour=red",
        "POST /api/v1/workers/heartbeat",
        "POST /api/v1/workers/heartbeat",
        "POST /api/v1/agents",
        f"HEAD /api/v1/agents/{ids['first']}",
    ]


def test_an_oversized_body_is_handed_on_whole(tmp_path: Path) -> None:
    app = build_app(app_settings(f"sqlite+aiosqlite:///{tmp_path / 'big.db'}", max_body_bytes=200))
    body = heartbeat_body("w-big", worker_metadata={"pad": "x" * 300})
    with TestClient(app) as client:
        client.headers.update(bearer(SERVICE_KEY))
        response = client.post("/api/v1/workers/heartbeat", json=body)
        assert response.status_code == 413, response.text
        assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"


class Odd(Controller):
    path = "/odd"

    @get("/{a:str}/{b:str}", operation_id="twoParameters")
    async def two(self, a: FromPath[str], b: FromPath[str]) -> dict[str, str]:
        return {"a": a, "b": b}

    @delete("/{a:str}", operation_id="noContent")
    async def gone(self, a: FromPath[str]) -> None:
        return None

    @get("/{a:str}/x", operation_id="overlapping")
    async def overlapping(self, a: FromPath[str]) -> dict[str, str]:
        return {"a": a}

    @get("/y/{b:str}", operation_id="overlapped")
    async def overlapped(self, b: FromPath[str]) -> dict[str, str]:
        return {"b": b}

    @get("/half{a:str}", operation_id="halfSegment")
    async def half(self, a: FromPath[str]) -> dict[str, str]:
        return {"a": a}

    @get("/flag", operation_id="flag")
    async def flag(self, on: FromQuery[bool] = False) -> dict[str, bool]:
        return {"on": on}


@pytest.mark.parametrize(
    "operation", ["twoParameters", "flag", "noContent", "noSuchOperation", "overlapping", "halfSegment"]
)
def test_the_lane_refuses_at_start_what_it_cannot_serve_exactly(operation: str) -> None:
    app = Litestar(route_handlers=[Odd])
    with pytest.raises(ValueError, match="fast lane"):
        FastLane(app.asgi_handler, app, [operation], 1024)


def test_the_app_serves_the_hot_operations_in_the_lane_unless_told_not_to() -> None:
    app = build_app(app_settings("memory://"))
    lane = lane_of(app)
    lanes = [*lane.exact.values(), *lane.prefixed.values(), *(x for xs in lane.inner.values() for x in xs)]
    served = {x.call.__name__ for x in lanes}
    assert served == {"get_agent", "list_agents", "heartbeat", "execute_agent", "lease", "append_events", "complete"}
    assert len(HOT_OPERATIONS) == len(served)
    plain = build_app(replace(app_settings("memory://"), fast_lane=False))
    assert not isinstance(security_of(plain).app, FastLane)


def _same_shape(answers: list[tuple[int, str | None, Any, set[str]]], names: dict[str, str]) -> list[Any]:
    """The answers with this side's ids replaced by the names they play."""

    def named(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: named(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [named(item) for item in value]
        if isinstance(value, str):
            for actual, role in names.items():
                value = value.replace(actual, role)
        return value

    return [named(each) for each in answers]


def _round_trip(client: TestClient[Any], side: str, agent: str, theirs: str) -> list[Any]:
    """The worker protocol, with its refusals, as one side of the comparison sees it."""
    environment = client.post("/api/v1/environments", json={"name": f"env-{side}"}).json()["id"]
    queue = client.post(f"/api/v1/environments/{environment}/worker-queues", json={"name": "q"}).json()["id"]
    worker = f"w-{side}"
    names = {environment: "environment", queue: "queue", worker: "worker", f"env-{side}": "env"}
    seen = []

    def call(method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
        sent = {**JSON, **(headers or {})}
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        response = client.request(method, path, content=raw, headers=sent)
        seen.append(answer(response))
        return response

    execute = f"/api/v1/agents/{agent}/execute"
    lease = f"/api/v1/worker-queues/{queue}/lease"
    execution = call("POST", execute, {"prompt": "p", "worker_queue_id": queue}).json()["id"]
    names[execution] = "execution"
    path = f"/api/v1/executions/{execution}"
    call("POST", execute, {"prompt": "p", "worker_queue_id": queue, "colour": "red"})
    call("POST", execute, {"prompt": " ", "worker_queue_id": queue})
    call("POST", execute, {"prompt": "p", "worker_queue_id": queue}, VIEWER)
    call("POST", "/api/v1/agents/no-such-agent/execute", {"prompt": "p", "worker_queue_id": queue})
    call("POST", f"/api/v1/agents/{theirs}/execute", {"prompt": "p", "worker_queue_id": queue})
    call("POST", execute, b'{"prompt": "p", "worker_queue_id": ')
    shouted = f"/api/v1/executions/{execution.upper()}"  # ids are read in any case
    leased = call("POST", f"/api/v1/worker-queues/{queue.upper()}/lease", {"worker_id": worker, "wait_seconds": 0})
    leased = leased.json()
    attempt = leased["attempt"]
    call("POST", lease, {"worker_id": worker, "wait_seconds": 0})  # nothing left: 204
    call("POST", "/api/v1/worker-queues/no-such-queue/lease", {"worker_id": worker, "wait_seconds": 0})
    call("POST", lease, {"worker_id": worker, "wait_seconds": -1})
    events = [{"type": "message_chunk", "data": {"text": "hi"}}, {"type": "log", "data": {"n": 1.5}}]
    call("POST", f"{shouted}/events", {"worker_id": worker, "attempt": attempt, "events": events})
    call("POST", f"{path}/events", {"worker_id": worker, "attempt": attempt + 1, "events": events})
    call("POST", f"{path}/events", {"worker_id": worker, "attempt": attempt, "events": [{"type": "done"}]})
    call("POST", f"{path}/events", {"worker_id": worker, "attempt": attempt, "events": events}, OTHER)
    call("POST", "/api/v1/executions/no-such/events", {"worker_id": worker, "attempt": 1, "events": events})
    done = {"worker_id": worker, "attempt": attempt, "status": "completed", "response": "ok", "usage": {"t": 2}}
    call("POST", f"{path}/complete", {**done, "status": "running"})
    call("POST", f"{path}/complete", done)
    call("POST", f"{shouted}/complete", done)  # the same completion again: the same answer
    call("POST", f"{path}/events", {"worker_id": worker, "attempt": attempt, "events": events})  # stale: 409
    seen.append(answer(client.get(f"{path}/events")))
    return _same_shape(seen, names)


def test_the_execution_round_trip_answers_the_same_with_and_without_the_lane(
    pair: tuple[TestClient[Any], TestClient[Any], dict[str, str]],
) -> None:
    fast, slow, ids = pair
    handed = handed_on(fast.app)
    with_lane = _round_trip(fast, "fast", ids["first"], ids["theirs"])
    served_by_litestar = [h.rsplit("/", 1)[-1] for h in handed if not h.startswith(("GET", "POST /api/v1/env"))]
    # only the bodies that are not plain JSON of the route's type (an unknown field, broken JSON, a wait below
    # zero, a status a completion cannot have) and the viewer's request: Litestar answers those
    assert served_by_litestar == ["execute", "execute", "execute", "lease", "complete"]
    without_lane = _round_trip(slow, "slow", ids["first"], ids["theirs"])
    assert [a[0] for a in with_lane] == [201, 422, 422, 403, 404, 404, 400, 200, 204, 404, 422, 200, 409, 422, 404,
                                         404, 422, 200, 200, 409, 200]  # fmt: skip
    assert with_lane == without_lane


def test_round_trip_requests_the_lane_cannot_read_exactly_go_to_litestar(
    pair: tuple[TestClient[Any], TestClient[Any], dict[str, str]],
) -> None:
    fast, _, ids = pair
    handed = handed_on(fast.app)
    body = {"worker_id": "w", "attempt": 1, "events": []}
    fast.post(f"/api/v1/agents/{ids['first']}/execute", json={"prompt": "p", "worker_queue_id": "q"},
              headers={"idempotency-key": "k"})  # fmt: skip
    fast.post("/api/v1/executions/e-1/events/", json=body)
    fast.post("/api/v1/executions/e-1/x/events", json=body)
    fast.post("/api/v1/executions//events", json=body)
    fast.post("/api/v1/executions/e-1/events", content=json.dumps(body), headers={"content-type": "text/plain"})
    assert handed == [
        f"POST /api/v1/agents/{ids['first']}/execute",
        "POST /api/v1/executions/e-1/events/",
        "POST /api/v1/executions/e-1/x/events",
        "POST /api/v1/executions//events",
        "POST /api/v1/executions/e-1/events",
    ]
