"""The reference worker against the real app, over a transport that loses an answer: a batch sent again is
recorded once."""

from __future__ import annotations

import httpx

from controlplane_domain.executions import EventType, TargetType
from controlplane_domain.paging import PageRequest
from controlplane_domain.ports import Ports
from controlplane_domain.usecases import agents, environments, executions
from controlplane_http.bootstrap import build_app
from controlplane_http.worker import ReferenceWorker, Task, WorkerConfig
from tests.conftest import app_settings
from tests.support import DEFAULT_ORG, SERVICE_KEY


class LosesTheFirstEventsAnswer(httpx.AsyncBaseTransport):
    """Hands every request to the app; the first event batch's answer is lost on the way back (a connection
    reset after the server committed it)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.lost = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.url.path.endswith("/events") and not self.lost:
            self.lost = True
            raise httpx.ReadError("connection reset by peer")
        return response


async def test_a_batch_whose_answer_was_lost_is_recorded_once() -> None:
    app = build_app(app_settings("memory://"))
    ports: Ports = app.state["ports"]
    agent = await agents.create_agent(ports, DEFAULT_ORG, agents.CreateAgent(name="a"))
    environment = await environments.create_environment(ports, DEFAULT_ORG, environments.CreateEnvironment(name="e"))
    queue = (
        await environments.create_queue(ports, DEFAULT_ORG, environment.id, environments.CreateQueue(name="q"))
    ).queue
    command = executions.ExecuteCommand(prompt="hi", worker_queue_id=queue.id)
    execution = await executions.execute(ports, DEFAULT_ORG, TargetType.AGENT, agent.id, command)
    leased = await executions.try_lease(ports, DEFAULT_ORG, queue.id, "w1")
    assert leased is not None
    transport = LosesTheFirstEventsAnswer(httpx.ASGITransport(app=app))
    worker = ReferenceWorker(WorkerConfig(api_url="http://cp", api_key=SERVICE_KEY, queue_id=queue.id, worker_id="w1"))
    await worker.api.aclose()
    worker.api = httpx.AsyncClient(base_url="http://cp", headers={"Authorization": f"Bearer {SERVICE_KEY}"},
                                   transport=transport)  # fmt: skip
    task = Task(execution.id, leased.execution.attempt)
    task.pending = [{"type": "message_chunk", "data": {"text": piece}} for piece in ("A", "B")]
    try:
        await worker.flush(task)
    finally:
        await worker.close()
    assert transport.lost
    assert task.pending == []
    page = await executions.list_events(ports, DEFAULT_ORG, execution.id, PageRequest(limit=100, offset=0))
    assert [e.data["text"] for e in page.items if e.type is EventType.MESSAGE_CHUNK] == ["A", "B"]
