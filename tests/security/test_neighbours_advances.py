"""Workflow advances that a request starts take one of their organization's slots (`OrganizationSlots`,
CONTROLPLANE_WORKFLOWS_ORGANIZATION_CONCURRENCY): an organization has at most so many such units of work at once on
a node, its others wait for a slot holding nothing (no database connection), and another organization's never wait
for them (issue #36). The background advances (the scheduler's firings, the steps' timeout sweep) are shared out in
turns instead (tests/contract/test_fairness.py)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.settings.loading import load_settings
from controlplane_adapters.settings.model import ConfigError
from controlplane_domain.fairness import OrganizationSlots
from controlplane_http.bootstrap import build_app
from tests.conftest import app_settings
from tests.databases import sqlite_database
from tests.support import bearer, make_jwt

HOSTILE = bearer(make_jwt("org-hostile", sub="member"))
NEIGHBOUR = bearer(make_jwt("org-neighbour", sub="bystander"))


async def until(condition: Any) -> None:
    """Turns of the loop until `condition()` holds (what the tasks under test do is a turn away at most)."""
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


async def test_an_organization_holds_at_most_its_slots_and_others_none_of_them() -> None:
    slots = OrganizationSlots(2)
    release = asyncio.Event()
    inside: list[str] = []

    async def work(organization_id: str) -> None:
        async with slots.slot(organization_id):
            inside.append(organization_id)
            await release.wait()

    hostile = [asyncio.create_task(work("a")) for _ in range(5)]
    await until(lambda: slots.waiting("a") == 3)
    assert (slots.holding("a"), inside) == (2, ["a", "a"])
    neighbour = asyncio.create_task(work("b"))
    await until(lambda: slots.holding("b") == 1)  # at once: a's slots are a's
    release.set()
    await asyncio.gather(*hostile, neighbour)
    assert len(inside) == 6
    assert (slots.holding("a"), slots.waiting("a"), slots.holding("b")) == (0, 0, 0)


async def setup_workflow(client: httpx.AsyncClient, headers: dict[str, str]) -> tuple[str, str]:
    """(a workflow of one step, a worker queue) of the caller's organization."""
    environment = await client.post("/api/v1/environments", json={"name": "env"}, headers=headers)
    queue = await client.post(
        f"/api/v1/environments/{environment.json()['id']}/worker-queues", json={"name": "q"}, headers=headers
    )
    agent = await client.post("/api/v1/agents", json={"name": "agent"}, headers=headers)
    steps = [{"id": "only", "agent_id": agent.json()["id"], "prompt": "do it"}]
    workflow = await client.post("/api/v1/workflows", json={"name": "flow", "steps": steps}, headers=headers)
    assert workflow.status_code == 201, workflow.text
    return workflow.json()["id"], queue.json()["id"]


async def test_a_request_started_advance_waits_for_its_organizations_slot_only(tmp_path: Path) -> None:
    settings = replace(app_settings(sqlite_database(tmp_path / "slots.db")), workflows_organization_concurrency=1)
    app = build_app(settings, clock=ManualClock())
    slots = app.state["ports"].advance_slots
    assert isinstance(slots, OrganizationSlots)
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with app.lifespan(), httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        hostile_flow, hostile_queue = await setup_workflow(client, HOSTILE)
        neighbour_flow, neighbour_queue = await setup_workflow(client, NEIGHBOUR)
        job = await client.post(
            "/api/v1/jobs",
            json={"name": "j", "trigger": {"type": "manual"}, "target": {"workflow_id": hostile_flow}, "prompt": "p",
                  "worker_queue_id": hostile_queue},
            headers=HOSTILE,
        )  # fmt: skip
        assert job.status_code == 201, job.text
        busy = asyncio.Event()

        async def occupy() -> None:  # the hostile organization's one slot, held as a long advance would hold it
            async with slots.slot("org-hostile"):
                await busy.wait()

        holder = asyncio.create_task(occupy())
        await until(lambda: slots.holding("org-hostile") == 1)
        run = {"worker_queue_id": hostile_queue, "input": {}}
        waiting = [
            asyncio.ensure_future(client.post(f"/api/v1/workflows/{hostile_flow}/runs", json=run, headers=HOSTILE)),
            asyncio.ensure_future(client.post(f"/api/v1/jobs/{job.json()['id']}/trigger", json={}, headers=HOSTILE)),
        ]
        await until(lambda: slots.waiting("org-hostile") == 2)
        started = await client.post(
            f"/api/v1/workflows/{neighbour_flow}/runs",
            json={"worker_queue_id": neighbour_queue, "input": {}},
            headers=NEIGHBOUR,
        )
        assert started.status_code == 201, started.text  # never behind the hostile organization's slot
        assert not any(request.done() for request in waiting)
        busy.set()
        answers = await asyncio.gather(*waiting)
        await holder
    assert [answer.status_code for answer in answers] == [201, 201], [answer.text for answer in answers]
    runs = [answers[0].json()["id"], answers[1].json()["workflow_run_id"]]
    assert all(isinstance(run_id, str) for run_id in runs)


def test_the_setting_is_read_and_bounded() -> None:
    env = {"CONTROLPLANE_WORKFLOWS_ORGANIZATION_CONCURRENCY": "2"}
    assert load_settings(env=env).workflows_organization_concurrency == 2
    with pytest.raises(ConfigError):
        load_settings(env={"CONTROLPLANE_WORKFLOWS_ORGANIZATION_CONCURRENCY": "0"})
