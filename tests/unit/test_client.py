"""The typed client's retries, stream resume and coverage, over `httpx.MockTransport` (no server)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from controlplane_client import ApiError, AsyncClient, Client, generate
from controlplane_wire.agents import Agent


def answers(*responses: httpx.Response) -> tuple[list[httpx.Request], httpx.MockTransport]:
    seen: list[httpx.Request] = []
    queue = list(responses)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return queue.pop(0)

    return seen, httpx.MockTransport(handle)


def limited(seconds: str = "2") -> httpx.Response:
    error = {"error": {"code": "RATE_LIMITED", "message": "slow down", "details": {}}}
    return httpx.Response(429, json=error, headers={"Retry-After": seconds, "X-Request-ID": "req-1"})


def unavailable() -> httpx.Response:
    error = {"error": {"code": "UNAVAILABLE", "message": "later", "details": {}}}
    return httpx.Response(503, json=error, headers={"Retry-After": "1"})


def created_agent() -> httpx.Response:
    return httpx.Response(201, json=json.loads(AGENT))


def agent() -> httpx.Response:
    return httpx.Response(200, json=json.loads(AGENT))


AGENT = json.dumps(
    {"id": "agt_1", "organization_id": "org", "name": "a", "description": None, "status": "active",
     "runtime": "default", "model_id": None, "system_prompt": None, "team_id": None, "capabilities": [],
     "skill_ids": [], "execution_environment": None, "configuration": {}, "project_ids": [],
     "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
)  # fmt: skip


def test_a_429_is_tried_again_after_retry_after() -> None:
    waits: list[float] = []
    seen, transport = answers(limited("2"), agent())
    with Client("http://cp", "key", transport=transport, sleep=waits.append) as client:
        assert isinstance(client.get_agent("agt_1"), Agent)
    assert waits == [2.0]
    assert len(seen) == 2
    assert seen[0].headers["Authorization"] == "Bearer key"


async def test_an_async_429_is_tried_again_after_retry_after() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    _, transport = answers(limited("3"), limited("1"), agent())
    async with AsyncClient("http://cp", "key", transport=transport, sleep=sleep) as client:
        assert isinstance(await client.get_agent("agt_1"), Agent)
    assert waits == [3.0, 1.0]


def test_retries_are_bounded_and_the_last_answer_raised() -> None:
    waits: list[float] = []
    _, transport = answers(limited(), limited(), limited())
    client = Client("http://cp", transport=transport, max_retries=2, sleep=waits.append)
    with client, pytest.raises(ApiError) as error:
        client.get_agent("agt_1")
    assert (error.value.status, error.value.code, error.value.request_id) == (429, "RATE_LIMITED", "req-1")
    assert waits == [2.0, 2.0]


def test_a_retry_after_beyond_the_cap_is_not_waited_for() -> None:
    waits: list[float] = []
    _, transport = answers(limited("120"))
    client = Client("http://cp", transport=transport, max_retry_wait=10, sleep=waits.append)
    with client, pytest.raises(ApiError) as error:
        client.get_agent("agt_1")
    assert error.value.retry_after == 120
    assert waits == []


def test_a_post_is_tried_again_on_429_but_on_503_only_with_an_idempotency_key() -> None:
    waits: list[float] = []
    seen, transport = answers(limited("1"), created_agent(), unavailable(), unavailable(), created_agent())
    with Client("http://cp", transport=transport, sleep=waits.append) as client:
        assert client.create_agent({"name": "a"}).id == "agt_1"
        with pytest.raises(ApiError) as error:
            client.create_agent({"name": "a"})
        assert error.value.code == "UNAVAILABLE"
        assert client.create_agent({"name": "a"}, idempotency_key="k1").id == "agt_1"
    assert waits == [1.0, 1.0]
    assert seen[-1].headers["Idempotency-Key"] == "k1"
    assert json.loads(seen[-1].content) == {"name": "a"}


def frame(seq: int, kind: str = "message_chunk") -> bytes:
    event = {"execution_id": "exe_1", "seq": seq, "type": kind, "data": {}, "attempt": 1,
             "created_at": "2026-01-01T00:00:00Z"}  # fmt: skip
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (seq, kind.encode(), json.dumps(event).encode())


class Dropped(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A stream that sends its frames, then loses the connection (or ends, when `drop` is false)."""

    def __init__(self, *frames: bytes, drop: bool = True) -> None:
        self.frames = [b"retry: 2000\n\n", b": keep-alive\n\n", *frames]
        self.drop = drop

    def __iter__(self) -> Iterator[bytes]:
        yield from self.frames
        if self.drop:
            raise httpx.ReadError("connection lost")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.frames:
            yield chunk
        if self.drop:
            raise httpx.ReadError("connection lost")


def streams() -> tuple[list[httpx.Request], httpx.MockTransport]:
    return answers(
        httpx.Response(200, stream=Dropped(frame(1), frame(2))),
        httpx.Response(200, stream=Dropped(frame(3), frame(4, "done"), drop=False)),
    )


def test_a_dropped_stream_resumes_with_last_event_id() -> None:
    seen, transport = streams()
    with Client("http://cp", transport=transport, sleep=lambda _: None) as client:
        assert [event.seq for event in client.stream_execution("exe_1")] == [1, 2, 3, 4]
    assert "last-event-id" not in seen[0].headers
    assert seen[1].headers["Last-Event-ID"] == "2"


async def test_a_dropped_async_stream_resumes_with_last_event_id() -> None:
    async def sleep(_: float) -> None:
        return None

    seen, transport = streams()
    async with AsyncClient("http://cp", transport=transport, sleep=sleep) as client:
        assert [event.seq async for event in client.stream_execution("exe_1", last_event_id=0)] == [1, 2, 3, 4]
    assert seen[1].headers["Last-Event-ID"] == "2"


@pytest.fixture(scope="module")
def document() -> dict[str, object]:
    return generate.openapi_document()


def test_every_operation_of_the_document_has_a_method(document: dict[str, object]) -> None:
    operations = [
        operation["operationId"]
        for item in document["paths"].values()  # type: ignore[attr-defined]
        for method, operation in item.items()
        if method in generate.METHODS
    ]
    assert len(operations) == len(set(operations))
    missing = {
        name: [op for op in operations if not callable(getattr(name, generate.snake(op), None))]
        for name in (Client, AsyncClient)
    }
    assert missing == {Client: [], AsyncClient: []}


def test_the_generated_operations_are_up_to_date(document: dict[str, object]) -> None:
    rendered = generate.Generator(document, generate.wire_types()).render()
    assert rendered == generate.TARGET.read_text(), "run: python -m controlplane_client.generate"


def run_frame(seq: int, kind: str, status: str) -> bytes:
    event = {"run_id": "wfr_1", "seq": seq, "type": kind, "data": {"status": status},
             "created_at": "2026-01-01T00:00:00Z"}  # fmt: skip
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (seq, kind.encode(), json.dumps(event).encode())


def test_a_run_stream_ends_after_the_runs_end_and_resumes_before_it() -> None:
    seen, transport = answers(
        httpx.Response(200, stream=Dropped(run_frame(1, "run", "running"), run_frame(2, "step", "running"))),
        httpx.Response(200, stream=Dropped(run_frame(3, "step", "succeeded"), run_frame(4, "run", "succeeded"))),
    )
    with Client("http://cp", transport=transport, sleep=lambda _: None) as client:
        events = list(client.stream_workflow_run("wfr_1"))
    assert [(event.seq, event.type, event.data["status"]) for event in events] == [
        (1, "run", "running"), (2, "step", "running"), (3, "step", "succeeded"), (4, "run", "succeeded"),
    ]  # fmt: skip
    assert [request.headers.get("Last-Event-ID") for request in seen] == [None, "2"]


def test_the_lists_order_and_name_filters_are_the_clients_keywords() -> None:
    seen, transport = answers(httpx.Response(200, json={"items": [], "total": 0, "limit": 5, "offset": 0}))
    with Client("http://cp", "key", transport=transport) as client:
        client.list_agents(order="desc", name="writer", q="RIT%", limit=5)
    assert dict(seen[0].url.params) == {"order": "desc", "name": "writer", "q": "RIT%", "limit": "5"}
