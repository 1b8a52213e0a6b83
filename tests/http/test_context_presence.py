"""An organization without contexts skips their read on execute (contexts/presence.py), and a context set later,
on this node or another, reaches the next executions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.memory.bus import LocalEventBus
from controlplane_domain.contexts.presence import CHANGED, ContextPresence
from tests.conftest import build_test_app, database_url
from tests.http.test_agents import create_agent
from tests.http.test_executions import execute, setup_queue
from tests.support import SERVICE_KEY, bearer, wait_until


def context_of(client: TestClient[Any], execution: dict[str, Any]) -> dict[str, Any]:
    response = client.get(f"/api/v1/executions/{execution['id']}/context")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_context_set_after_executes_without_any_reaches_the_next_one(client: TestClient[Any]) -> None:
    _, queue = setup_queue(client)
    agent = create_agent(client)["id"]
    for _ in range(2):  # the second execute is served knowing the organization has no context
        assert context_of(client, execute(client, agent, queue))["instructions"] == ""
    put = client.put(f"/api/v1/agents/{agent}/context", json={"instructions": "Be brief."})
    assert put.status_code == 200, put.text
    assert context_of(client, execute(client, agent, queue))["instructions"] == "Be brief."
    assert client.delete(f"/api/v1/agents/{agent}/context").status_code == 204
    assert context_of(client, execute(client, agent, queue))["instructions"] == ""


@pytest.mark.postgres
def test_a_context_set_on_another_node_reaches_this_one(
    tmp_path: Path, clock: ManualClock, request: pytest.FixtureRequest
) -> None:
    url = database_url("postgres", tmp_path, request)
    with (
        TestClient(build_test_app("postgres", tmp_path, clock, url)) as here,
        TestClient(build_test_app("postgres", tmp_path, clock, url)) as there,
    ):
        for node in (here, there):
            node.headers.update(bearer(SERVICE_KEY))
        _, queue = setup_queue(here)
        agent = create_agent(here)["id"]
        assert context_of(here, execute(here, agent, queue))["instructions"] == ""
        assert there.put(f"/api/v1/agents/{agent}/context", json={"instructions": "Node B"}).status_code == 200
        wait_until(lambda: context_of(here, execute(here, agent, queue))["instructions"] == "Node B")


async def test_a_read_in_flight_across_a_change_is_not_remembered() -> None:
    bus = LocalEventBus()
    seen = ContextPresence(bus)
    generation = seen.generation
    await bus.publish(CHANGED)  # a context set while the read was in flight
    seen.learned("org", generation, has_any=False)
    assert not seen.known_empty("org")
    seen.learned("org", seen.generation, has_any=False)
    assert seen.known_empty("org")
    await bus.publish(CHANGED)
    assert not seen.known_empty("org")
    assert not seen.knows("org")
