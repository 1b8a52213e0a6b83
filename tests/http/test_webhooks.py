"""Webhooks over HTTP on every store: the rules of a webhook (addresses refused after resolution, events, the
secret shown once), roles and organizations, and deliveries to a receiver on loopback (verified with the
`standardwebhooks` package): an execution's completion and error events, a test event, a redelivery, a redirect
counted as a failure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.jobs.trigger_signatures import StandardWebhooks
from tests.conftest import BACKENDS, build_test_app, database_url
from tests.fakes.webhook_receiver import WebhookReceiver
from tests.http.test_agents import create_agent
from tests.http.test_executions import execute, lease, setup_queue
from tests.support import BEFORE_THE_STORE, SERVICE_KEY, bearer, make_jwt, wait_until

PUBLIC = "https://93.184.215.14/hooks"  # a public address, named as such (no name to resolve)


def create(client: TestClient[Any], url: str = PUBLIC, events: list[str] | None = None, **more: Any) -> Any:
    response = client.post("/api/v1/webhooks", json={"url": url, "events": events or ["*"], **more})
    assert response.status_code == 201, response.text
    return response.json()


@pytest.mark.parametrize(
    ("url", "issue"),
    [
        ("https://localhost/hooks", "127.0.0.1 is a loopback address"),  # a name resolving to loopback
        ("https://127.0.0.1:8443/x", "loopback"),
        ("https://[::1]/x", "loopback"),
        ("https://10.1.2.3/x", "private"),
        ("https://192.168.0.1/x", "private"),
        ("https://169.254.169.254/latest/meta-data", "metadata"),
        ("https://[fd00:ec2::254]/", "metadata"),
        ("https://[::ffff:10.0.0.1]/", "private"),
        ("https://0.0.0.0/", "not a public address"),
        ("http://93.184.215.14/hooks", "must be an https URL"),
        ("ftp://93.184.215.14/hooks", "must be an https URL"),
        ("https://user:pass@93.184.215.14/", "credentials"),
        ("https://no-such-host.invalid/", "does not resolve"),
        ("not a url", "must not contain spaces"),
    ],
)
@BEFORE_THE_STORE
def test_addresses_that_are_not_public_are_refused(client: TestClient[Any], url: str, issue: str) -> None:
    response = client.post("/api/v1/webhooks", json={"url": url, "events": ["*"]})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["details"]["field"] == "url"
    assert issue in response.json()["error"]["details"]["issue"]
    hook = create(client)
    patched = client.patch(f"/api/v1/webhooks/{hook['id']}", json={"url": url})
    assert patched.status_code == 422, patched.text
    assert client.get(f"/api/v1/webhooks/{hook['id']}").json()["url"] == PUBLIC


def test_the_secret_is_shown_once_and_events_are_checked(client: TestClient[Any]) -> None:
    hook = create(client, events=["execution.completed", "job.fired", "job.fired"], description="ops")
    assert hook["secret"].startswith("whsec_")
    assert (hook["events"], hook["enabled"], hook["description"]) == (["execution.completed", "job.fired"], True, "ops")
    assert client.get(f"/api/v1/webhooks/{hook['id']}").json()["secret"] is None
    assert [each["secret"] for each in client.get("/api/v1/webhooks").json()["items"]] == [None]
    unknown = client.post("/api/v1/webhooks", json={"url": PUBLIC, "events": ["execution.exploded"]})
    assert unknown.status_code == 422
    assert unknown.json()["error"]["details"]["field"] == "events.0"
    assert client.post("/api/v1/webhooks", json={"url": PUBLIC, "events": []}).status_code == 422
    changed = client.patch(f"/api/v1/webhooks/{hook['id']}", json={"events": ["*", "error"], "enabled": False})
    assert (changed.json()["events"], changed.json()["enabled"], changed.json()["secret"]) == (["*"], False, None)
    assert client.post(f"/api/v1/webhooks/{hook['id']}/test").status_code == 409  # disabled
    assert client.delete(f"/api/v1/webhooks/{hook['id']}").status_code == 204
    assert client.get(f"/api/v1/webhooks/{hook['id']}").status_code == 404
    assert client.get("/api/v1/webhooks/not-a-uuid").status_code == 404


def test_admins_write_everyone_reads_and_other_organizations_see_nothing(
    client: TestClient[Any], other_org: dict[str, str]
) -> None:
    hook = create(client)
    path = f"/api/v1/webhooks/{hook['id']}"
    member = bearer(make_jwt("default", roles=["member"]))
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.post("/api/v1/webhooks", json={"url": PUBLIC, "events": ["*"]}, headers=member).status_code == 403
    assert client.patch(path, json={"enabled": False}, headers=member).status_code == 403
    assert client.post(f"{path}/test", headers=member).status_code == 403
    assert client.get(path, headers=viewer).status_code == 200
    assert client.get(f"{path}/deliveries", headers=viewer).status_code == 200
    for method, route in (("GET", path), ("PATCH", path), ("DELETE", path), ("GET", f"{path}/deliveries"),
                          ("POST", f"{path}/test")):  # fmt: skip
        response = client.request(method, route, headers=other_org, json={} if method == "PATCH" else None)
        assert response.status_code == 404, (method, route, response.text)
    assert client.get("/api/v1/webhooks", headers=other_org).json()["total"] == 0


def test_a_job_webhook_route_stays_public_and_the_webhooks_routes_do_not(client: TestClient[Any]) -> None:
    anonymous = {"Authorization": ""}
    assert client.get("/api/v1/webhooks/jobs/deliveries", headers=anonymous).status_code == 401
    assert client.post("/api/v1/webhooks/jobs/test", headers=anonymous).status_code == 404  # (no such job)
    hook = create(client)
    assert client.get(f"/api/v1/webhooks/{hook['id']}/deliveries", headers=anonymous).status_code == 401


@pytest.fixture(params=BACKENDS)
def delivering(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[TestClient[Any], ManualClock]]:
    """A client of an app that delivers (its dispatcher runs), to loopback (allowed here)."""
    clock = ManualClock()
    url = database_url(request.param, tmp_path, request)
    app = build_test_app(request.param, tmp_path, clock, url, webhooks_deliver=True, webhooks_allow_private=True)
    with TestClient(app) as test_client:
        test_client.headers.update(bearer(SERVICE_KEY))
        yield test_client, clock


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    receiving = WebhookReceiver()
    yield receiving
    receiving.stop()


def deliveries(client: TestClient[Any], webhook_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.get(f"/api/v1/webhooks/{webhook_id}/deliveries").json()["items"]
    return items


def verified(receiver: WebhookReceiver, secret: str, clock: ManualClock) -> list[dict[str, Any]]:
    """The bodies the receiver got, each signature checked with the package (against the service's clock)."""
    checker = StandardWebhooks()
    bodies = []
    for message in receiver.messages():
        assert checker.verify(secret, message.body, message.headers, clock.now()), message
        bodies.append({"id": message.headers["webhook-id"], **json.loads(message.body)})
    return bodies


def test_an_execution_completes_and_its_webhooks_get_it_signed(
    delivering: tuple[TestClient[Any], ManualClock], receiver: WebhookReceiver
) -> None:
    client, clock = delivering
    everything = create(client, receiver.url + "/all", ["*"])
    failures = create(client, receiver.url + "/failed", ["execution.failed"])
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    execution = execute(client, agent["id"], queue_id)
    assert lease(client, queue_id) is not None
    path = f"/api/v1/executions/{execution['id']}"
    error = {"type": "error", "data": {"message": "tool broke"}}
    assert client.post(f"{path}/events", json={"worker_id": "w1", "attempt": 1, "events": [error]}).status_code == 200
    done = {"worker_id": "w1", "attempt": 1, "status": "completed", "response": "Hello"}
    assert client.post(f"{path}/complete", json=done).status_code == 200

    wait_until(lambda: len(receiver.messages()) == 2)
    error_event, completed = verified(receiver, everything["secret"], clock)
    assert error_event["type"] == "error"
    assert error_event["data"]["data"] == {"message": "tool broke"}
    assert completed["type"] == "execution.completed"
    assert completed["data"]["id"] == execution["id"]
    assert completed["data"]["response"] == "Hello"
    assert {message.path for message in receiver.messages()} == {"/hooks/all"}
    wait_until(lambda: [d["status"] for d in deliveries(client, everything["id"])] == ["succeeded"] * 2)
    log = deliveries(client, everything["id"])
    assert [(d["event_type"], d["attempts"], d["response_code"]) for d in log] == [
        ("execution.completed", 1, 204), ("error", 1, 204)]  # fmt: skip
    assert log[0]["message_id"] == completed["id"]
    assert log[0]["latency_ms"] >= 0
    assert deliveries(client, failures["id"]) == []


def test_a_test_event_and_a_redelivery_carry_the_same_webhook_id(
    delivering: tuple[TestClient[Any], ManualClock], receiver: WebhookReceiver
) -> None:
    client, clock = delivering
    hook = create(client, receiver.url, ["job.fired"])
    test = client.post(f"/api/v1/webhooks/{hook['id']}/test")
    assert test.status_code == 202, test.text
    assert (test.json()["event_type"], test.json()["status"]) == ("webhook.test", "pending")
    wait_until(lambda: deliveries(client, hook["id"])[0]["status"] == "succeeded")
    again = client.post(f"/api/v1/webhooks/{hook['id']}/deliveries/{test.json()['id']}/redeliver")
    assert again.status_code == 202, again.text
    assert again.json()["message_id"] == test.json()["message_id"]
    assert again.json()["redelivery_of"] == test.json()["id"]
    wait_until(lambda: len(receiver.messages()) == 2)
    first, second = verified(receiver, hook["secret"], clock)
    assert first == second
    assert first["type"] == "webhook.test"
    assert first["id"] == test.json()["message_id"]
    missing = client.post(f"/api/v1/webhooks/{hook['id']}/deliveries/{hook['id']}/redeliver")
    assert missing.status_code == 404


def test_a_redirect_is_a_failed_attempt_retried_later(
    delivering: tuple[TestClient[Any], ManualClock], receiver: WebhookReceiver
) -> None:
    client, _ = delivering
    receiver.status, receiver.location = 302, "http://169.254.169.254/latest"
    hook = create(client, receiver.url, ["*"])
    test = client.post(f"/api/v1/webhooks/{hook['id']}/test").json()
    wait_until(lambda: deliveries(client, hook["id"])[0]["attempts"] == 1)
    (attempted,) = deliveries(client, hook["id"])
    assert (attempted["status"], attempted["response_code"]) == ("pending", 302)
    assert "redirects are not followed" in attempted["last_error"]
    assert attempted["next_attempt_at"] > attempted["last_attempt_at"]
    assert len(receiver.messages()) == 1  # the redirect's target was never asked
    pending = client.post(f"/api/v1/webhooks/{hook['id']}/deliveries/{test['id']}/redeliver")
    assert pending.status_code == 409
    assert client.get(f"/api/v1/webhooks/{hook['id']}").json()["failing_since"] is not None


def test_a_worker_that_falls_silent_is_announced_offline_by_the_service(
    tmp_path: Path, receiver: WebhookReceiver
) -> None:
    """No heartbeat for three intervals: the lease reaper (a quarter of the lease timeout apart) stores `offline` for
    the worker and its webhooks hear it, without a word from the worker."""
    from dataclasses import replace

    from controlplane_http.bootstrap import build_app
    from tests.conftest import app_settings
    from tests.databases import sqlite_database

    clock = ManualClock()
    settings = app_settings(sqlite_database(tmp_path / "t.db"), webhooks_deliver=True, webhooks_allow_private=True)
    app = build_app(replace(settings, lease_timeout_seconds=2), clock=clock)
    with TestClient(app) as client:
        client.headers.update(bearer(SERVICE_KEY))
        hook = create(client, receiver.url, ["worker.status_changed"])
        beat = client.post("/api/v1/workers/heartbeat", json={"worker_id": "w-quiet", "environment_name": "prod"})
        interval = beat.json()["heartbeat_interval_seconds"]
        wait_until(lambda: len(receiver.messages()) == 1)
        clock.advance(interval * 3 + 1)
        wait_until(lambda: len(receiver.messages()) == 2)
        came, went = verified(receiver, hook["secret"], clock)
    assert (came["data"]["status"], came["data"]["previous_status"]) == ("active", None)
    assert went["type"] == "worker.status_changed"
    assert {key: went["data"][key] for key in ("worker_id", "status", "previous_status", "online")} == {
        "worker_id": "w-quiet", "status": "offline", "previous_status": "active", "online": False}  # fmt: skip
