"""Webhooks against a real server on Postgres and a receiver on loopback that verifies every signature with the
`standardwebhooks` package: a receiver down for a while, then up, gets every event once (by `webhook-id`), in
order; a server killed (SIGKILL) after the change committed and before any delivery delivers after its restart."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from tests.databases import truncate
from tests.e2e.conftest import start_server, stop_server
from tests.e2e.test_executions import make_agent, make_queue
from tests.fakes.webhook_receiver import WebhookReceiver
from tests.support import SECRETS_KEY, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

ENV = {
    "CONTROLPLANE_WEBHOOKS_ALLOW_PRIVATE": "true",
    "CONTROLPLANE_SCHEDULER_INTERVAL_MS": "200",
    "CONTROLPLANE_SECRETS_KEY": SECRETS_KEY,
}  # (the signing secrets are sealed with it)


def complete_one(client: httpx.Client, agent_id: str, queue_id: str, prompt: str) -> str:
    """An execution run by hand through the worker protocol to `completed`: its id."""
    execution = client.post(f"/api/v1/agents/{agent_id}/execute", json={"prompt": prompt, "worker_queue_id": queue_id})
    assert execution.status_code == 201, execution.text
    leased = client.post(f"/api/v1/worker-queues/{queue_id}/lease", json={"worker_id": "w1", "wait_seconds": 0})
    assert leased.status_code == 200, leased.text
    done = {"worker_id": "w1", "attempt": 1, "status": "completed", "response": f"done {prompt}"}
    finished = client.post(f"/api/v1/executions/{execution.json()['id']}/complete", json=done)
    assert finished.status_code == 200, finished.text
    return str(execution.json()["id"])


def verified(receiver: WebhookReceiver, secret: str) -> list[dict[str, Any]]:
    checker = Webhook(secret)  # the package, with its own clock and five minutes' tolerance
    return [{"webhook-id": m.headers["webhook-id"], **checker.verify(m.body, m.headers)} for m in receiver.messages()]


def deliveries(client: httpx.Client, webhook_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.get(f"/api/v1/webhooks/{webhook_id}/deliveries").json()["items"]
    return items


def test_a_receiver_down_then_up_gets_every_event_once_in_order(tmp_path: Path, postgres_url: str) -> None:
    asyncio.run(truncate(postgres_url))
    receiver = WebhookReceiver()
    server = start_server(tmp_path, postgres_url, **ENV)
    try:
        with server.client() as client:
            hook = client.post("/api/v1/webhooks", json={"url": receiver.url, "events": ["execution.completed"]})
            assert hook.status_code == 201, hook.text
            webhook_id, secret = hook.json()["id"], hook.json()["secret"]
            receiver.stop()  # down: connections refused
            agent_id, queue_id = make_agent(client), make_queue(client)
            executions = [complete_one(client, agent_id, queue_id, f"task {n}") for n in range(5)]
            wait_until(lambda: max(d["attempts"] for d in deliveries(client, webhook_id)) >= 2)
            log = deliveries(client, webhook_id)
            assert [d["status"] for d in log] == ["pending"] * 5
            assert sum(d["attempts"] for d in log) == log[-1]["attempts"]  # only the oldest was tried: order holds
            assert log[-1]["response_code"] is None
            assert log[-1]["last_error"]

            receiver.start()  # up again, on the same port
            wait_until(lambda: all(d["status"] == "succeeded" for d in deliveries(client, webhook_id)))
            bodies = verified(receiver, secret)
            assert [body["data"]["id"] for body in bodies] == executions  # each once, in order
            assert len({body["webhook-id"] for body in bodies}) == 5
            assert {body["type"] for body in bodies} == {"execution.completed"}
    finally:
        stop_server(server)
        receiver.stop()


def test_a_server_killed_after_the_change_delivers_after_its_restart(tmp_path: Path, postgres_url: str) -> None:
    asyncio.run(truncate(postgres_url))
    receiver = WebhookReceiver()
    # the first server writes events but delivers none: it is killed between the change and the delivery
    server = start_server(tmp_path, postgres_url, **ENV, CONTROLPLANE_WEBHOOKS_DELIVER="false")
    port = int(server.url.rsplit(":", 1)[1])
    restarted = None
    try:
        with server.client() as client:
            hook = client.post("/api/v1/webhooks", json={"url": receiver.url, "events": ["*"]}).json()
            execution_id = complete_one(client, make_agent(client), make_queue(client), "before the crash")
            (written,) = [d for d in deliveries(client, hook["id"]) if d["event_type"] == "execution.completed"]
            assert (written["status"], written["attempts"]) == ("pending", 0)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
        assert receiver.messages() == []

        restarted = start_server(tmp_path, postgres_url, port=port, **ENV)
        wait_until(lambda: any(m.headers["webhook-id"] == written["message_id"] for m in receiver.messages()))
        bodies = verified(receiver, hook["secret"])
        completed = [body for body in bodies if body["type"] == "execution.completed"]
        assert [body["data"]["id"] for body in completed] == [execution_id]
        assert [body["webhook-id"] for body in completed] == [written["message_id"]]
        with restarted.client() as client:
            wait_until(lambda: deliveries(client, hook["id"])[0]["status"] == "succeeded")
            assert json.loads(deliveries(client, hook["id"])[0]["payload"])["type"] == "execution.completed"
    finally:
        if restarted is not None:
            stop_server(restarted)
        if server.process.poll() is None:
            stop_server(server)
        receiver.stop()
