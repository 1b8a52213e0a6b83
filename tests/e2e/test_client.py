"""The typed client (`controlplane_client`) against a real `controlplane serve` on loopback, sync and async."""

from __future__ import annotations

from pathlib import Path

import pytest

from controlplane_client import ApiError, AsyncClient, Client, aiterate, iterate
from controlplane_wire.agents import Agent, AgentCreate, AgentUpdate
from controlplane_wire.executions import CompleteRequest, EventsAppend, LeaseRequest, NewEvent
from controlplane_wire.workers import WorkerHeartbeat
from tests.e2e.conftest import Server, start_server, stop_server
from tests.support import SERVICE_KEY

pytestmark = pytest.mark.e2e


def test_an_agents_lifecycle_reads_as_the_servers_wire_types(sqlite_server: Server) -> None:
    with Client(sqlite_server.url, SERVICE_KEY) as client:
        created = client.create_agent(AgentCreate(name="triage", system_prompt="be brief"))
        assert isinstance(created, Agent)
        assert created.name == "triage"
        assert client.get_agent(created.id) == created
        updated = client.update_agent(created.id, AgentUpdate(description="first line"))
        assert (updated.id, updated.description) == (created.id, "first line")
        assert [agent.id for agent in client.list_agents().items] == [created.id]
        client.delete_agent(created.id)
        with pytest.raises(ApiError) as missing:
            client.get_agent(created.id)
        assert (missing.value.status, missing.value.code) == (404, "NOT_FOUND")
        assert missing.value.request_id


async def test_errors_carry_the_envelopes_code_async(sqlite_server: Server) -> None:
    async with AsyncClient(sqlite_server.url, SERVICE_KEY) as client:
        with pytest.raises(ApiError) as invalid:
            await client.create_agent({"name": ""})
        assert (invalid.value.status, invalid.value.code) == (422, "VALIDATION_ERROR")
        assert invalid.value.details
        with pytest.raises(ApiError) as missing:
            await client.delete_agent("agt_doesnotexist")
        assert missing.value.status == 404


async def test_iterators_walk_every_page(sqlite_server: Server) -> None:
    with Client(sqlite_server.url, SERVICE_KEY) as client:
        names = [f"agent-{n}" for n in range(5)]
        for name in names:
            client.create_agent({"name": name})
        assert [agent.name for agent in iterate(client.list_agents, limit=2)] == names
    async with AsyncClient(sqlite_server.url, SERVICE_KEY) as aclient:
        assert [agent.name async for agent in aiterate(aclient.list_agents, limit=2)] == names


def run_an_execution(client: Client, chunks: int) -> str:
    """An execution run to its end through the client itself, acting as the worker: its id."""
    environment = client.create_environment({"name": "client-e2e"})
    queue = client.create_worker_queue(environment.id, {"name": "q"})
    agent = client.create_agent({"name": "writer"})
    execution = client.execute_agent(agent.id, {"prompt": "hi", "worker_queue_id": queue.id})
    client.worker_heartbeat(WorkerHeartbeat(worker_id="w1", environment_name="client-e2e"))
    lease = client.lease_execution(queue.id, LeaseRequest(worker_id="w1", wait_seconds=5))
    assert lease is not None
    assert lease.execution.id == execution.id
    events = [NewEvent(type="message_chunk", data={"text": f"c{n}"}) for n in range(chunks)]  # type: ignore[arg-type]
    client.append_execution_events(execution.id, EventsAppend(worker_id="w1", attempt=lease.attempt, events=events))
    done = client.complete_execution(
        execution.id, CompleteRequest(worker_id="w1", attempt=lease.attempt, status="completed", response="ok")
    )
    assert done.status == "completed"
    return execution.id


def test_the_stream_resumes_after_the_last_event_it_read(sqlite_server: Server) -> None:
    with Client(sqlite_server.url, SERVICE_KEY) as client:
        execution_id = run_an_execution(client, chunks=4)
        everything = [event.seq for event in client.stream_execution(execution_id)]
        assert everything == list(range(1, everything[-1] + 1))
        first: list[int] = []
        for event in client.stream_execution(execution_id):
            first.append(event.seq)
            if len(first) == 2:
                break  # leaving the loop closes the connection
        rest = list(client.stream_execution(execution_id, last_event_id=first[-1]))
        assert first + [event.seq for event in rest] == everything
        assert str(rest[-1].type) == "done"


async def test_the_async_stream_resumes_too(sqlite_server: Server) -> None:
    with Client(sqlite_server.url, SERVICE_KEY) as client:
        execution_id = run_an_execution(client, chunks=3)
    async with AsyncClient(sqlite_server.url, SERVICE_KEY) as aclient:
        first = []
        async for event in aclient.stream_execution(execution_id):
            first.append(event)
            if len(first) == 2:
                break
        rest = [event async for event in aclient.stream_execution(execution_id, last_event_id=first[-1].seq)]
        seqs = [event.seq for event in first + rest]
        assert seqs == list(range(1, len(seqs) + 1))
        assert str(rest[-1].type) == "done"


def test_a_429_whose_retry_after_exceeds_the_cap_is_raised_at_once(tmp_path: Path) -> None:
    limited = start_server(
        tmp_path,
        f"sqlite+aiosqlite:///{tmp_path / 'limited.db'}",
        CONTROLPLANE_SERVICE_RATE_LIMIT_PER_MINUTE="3",  # (the client calls with the service key)
    )
    waits: list[float] = []
    try:
        client = Client(limited.url, SERVICE_KEY, max_retries=2, max_retry_wait=0.5, sleep=waits.append)
        with client, pytest.raises(ApiError) as limited_error:
            for _ in range(10):
                client.list_agents()
        assert (limited_error.value.status, limited_error.value.code) == (429, "RATE_LIMITED")
        assert limited_error.value.retry_after is not None
        assert limited_error.value.retry_after > 0.5
        assert waits == []  # Retry-After asked for more than the cap allows: no retry, no wait
    finally:
        stop_server(limited)
