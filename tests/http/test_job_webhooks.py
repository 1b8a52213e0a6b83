"""Webhook jobs over HTTP, on every store: the signing secret, Standard Webhooks signatures (no bearer), repeated
deliveries, the body's cap, the payload in the prompt, the per-job rate limit."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.jobs.trigger_signatures import sign
from controlplane_http.bootstrap import build_app
from tests.conftest import app_settings
from tests.http.test_jobs import create_job, runs
from tests.support import SERVICE_KEY, bearer

PUBLIC_URL = "http://127.0.0.1:8001"  # the tests' settings give none: the default bind's address


def webhook_job(client: TestClient[Any], name: str = "on-push", **fields: Any) -> dict[str, Any]:
    fields.setdefault("prompt", "review {{payload.repository.name}} at {{payload.after}}")
    return create_job(client, name, trigger={"type": "webhook"}, **fields)


def deliver(
    client: TestClient[Any], job: dict[str, Any], payload: Any, clock: ManualClock, *, webhook_id: str = "msg_1",
    secret: str | None = None, raw: bytes | None = None, at: timedelta = timedelta(0),
) -> Any:  # fmt: skip
    body = raw if raw is not None else json.dumps(payload).encode()
    headers = sign(secret or job["webhook_secret"], webhook_id, clock.now() + at, body)
    path = job["webhook_url"].removeprefix(PUBLIC_URL)
    return client.post(path, content=body, headers={**headers, "Content-Type": "application/json", "Authorization": ""})


PUSH = {"repository": {"name": "api"}, "after": "abc123"}


def test_a_webhook_job_has_a_url_and_a_secret_shown_once(client: TestClient[Any]) -> None:
    job = webhook_job(client)
    assert job["webhook_secret"].startswith("whsec_")
    assert job["webhook_url"] == f"{PUBLIC_URL}/api/v1/webhooks/jobs/{job['id']}"  # the settings', not the Host's
    assert job["next_run_at"] is None
    again = client.get(f"/api/v1/jobs/{job['id']}").json()
    assert (again["webhook_secret"], again["webhook_url"]) == (None, job["webhook_url"])
    assert client.get("/api/v1/jobs").json()["items"][0]["webhook_secret"] is None


def test_a_signed_delivery_fires_the_job_with_its_payload(client: TestClient[Any], clock: ManualClock) -> None:
    job = webhook_job(client)
    client.headers.pop("Authorization")
    response = deliver(client, job, PUSH, clock)
    assert response.status_code == 201, response.text
    run = response.json()
    assert (run["trigger"], run["status"], run["webhook_id"]) == ("webhook", "fired", "msg_1")
    client.headers.update(bearer(SERVICE_KEY))
    assert client.get(f"/api/v1/executions/{run['execution_id']}").json()["prompt"] == "review api at abc123"


def test_a_repeated_webhook_id_answers_the_first_run(client: TestClient[Any], clock: ManualClock) -> None:
    job = webhook_job(client)
    first = deliver(client, job, PUSH, clock)
    clock.advance(30)
    repeated = deliver(client, job, {"other": True}, clock)
    assert (first.status_code, repeated.status_code) == (201, 200)
    assert repeated.json() == first.json()
    assert deliver(client, job, PUSH, clock, webhook_id="msg_2").status_code == 201
    assert len(runs(client, job["id"])) == 2
    assert client.get("/api/v1/executions").json()["total"] == 2


def test_bad_stale_or_missing_signatures_are_401(client: TestClient[Any], clock: ManualClock) -> None:
    job = webhook_job(client)
    other = webhook_job(client, "other")
    assert deliver(client, job, PUSH, clock, secret=other["webhook_secret"]).status_code == 401
    assert deliver(client, job, PUSH, clock, at=-timedelta(minutes=5, seconds=1)).status_code == 401
    assert deliver(client, job, PUSH, clock, at=timedelta(minutes=5, seconds=1)).status_code == 401
    assert deliver(client, job, PUSH, clock, at=-timedelta(minutes=4, seconds=59)).status_code == 201
    path = f"/api/v1/webhooks/jobs/{job['id']}"
    unsigned = client.post(path, json=PUSH)
    assert unsigned.status_code == 401
    assert unsigned.json()["error"]["code"] == "UNAUTHORIZED"
    garbage = {"webhook-id": "x", "webhook-timestamp": "now", "webhook-signature": "v1"}
    assert client.post(path, json=PUSH, headers=garbage).status_code == 401
    signed = sign(job["webhook_secret"], "msg_9", clock.now(), json.dumps(PUSH).encode())
    tampered = client.post(path, content=json.dumps({**PUSH, "after": "evil"}).encode(), headers=signed)
    assert tampered.status_code == 401
    assert len(runs(client, job["id"])) == 1


def test_rotating_the_secret_retires_the_old_one(client: TestClient[Any], clock: ManualClock) -> None:
    job = webhook_job(client)
    rotated = client.post(f"/api/v1/jobs/{job['id']}/rotate-secret")
    assert rotated.status_code == 200, rotated.text
    secret = rotated.json()["webhook_secret"]
    assert secret.startswith("whsec_")
    assert secret != job["webhook_secret"]
    assert deliver(client, job, PUSH, clock).status_code == 401
    assert deliver(client, job, PUSH, clock, secret=secret).status_code == 201
    manual = create_job(client, "by-hand")
    assert client.post(f"/api/v1/jobs/{manual['id']}/rotate-secret").status_code == 409


def test_a_job_made_a_webhook_job_gets_a_secret_and_loses_it_when_changed_back(client: TestClient[Any]) -> None:
    job = create_job(client)
    made = client.patch(f"/api/v1/jobs/{job['id']}", json={"trigger": {"type": "webhook"}}).json()
    assert made["webhook_secret"].startswith("whsec_")
    assert client.patch(f"/api/v1/jobs/{job['id']}", json={"prompt": "p"}).json()["webhook_secret"] is None
    back = client.patch(f"/api/v1/jobs/{job['id']}", json={"trigger": {"type": "manual"}}).json()
    assert (back["webhook_secret"], back["webhook_url"]) == (None, None)


def test_bodies_unknown_jobs_and_disabled_jobs(client: TestClient[Any], clock: ManualClock) -> None:
    job = webhook_job(client)
    big = {"blob": "x" * (256 * 1024)}
    too_big = deliver(client, job, big, clock)
    assert too_big.status_code == 413
    assert too_big.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert deliver(client, job, None, clock, raw=b"not json").status_code == 422
    assert deliver(client, job, [1, 2], clock).status_code == 422
    manual = create_job(client, "by-hand")
    manual_path = f"/api/v1/webhooks/jobs/{manual['id']}"
    assert client.post(manual_path, json={}).status_code == 404
    unknown = "/api/v1/webhooks/jobs/00000000-0000-4000-8000-000000000000"
    assert client.post(unknown, json={}).status_code == 404
    client.patch(f"/api/v1/jobs/{job['id']}", json={"enabled": False})
    assert deliver(client, job, PUSH, clock).status_code == 409
    assert runs(client, job["id"]) == []


def test_deliveries_are_rate_limited_per_job(tmp_path: Path, clock: ManualClock) -> None:
    settings = replace(app_settings("memory://"), webhook_rate_limit_per_minute=2)
    with TestClient(build_app(settings, clock=clock)) as client:
        client.headers.update(bearer(SERVICE_KEY))
        job, other = webhook_job(client), webhook_job(client, "other")
        answers = [deliver(client, job, PUSH, clock, webhook_id=f"m{n}").status_code for n in range(3)]
        assert answers == [201, 201, 429]
        assert deliver(client, other, PUSH, clock).status_code == 201
        limited = deliver(client, job, PUSH, clock, webhook_id="m9")
        assert limited.json()["error"]["code"] == "RATE_LIMITED"
        assert "Retry-After" in limited.headers


def test_a_delivery_whose_queue_is_gone_fails_once_and_disables_the_job(
    client: TestClient[Any], clock: ManualClock
) -> None:
    job = webhook_job(client)
    gone = client.delete(f"/api/v1/worker-queues/{job['worker_queue_id']}", params={"force": "true"})
    assert gone.headers["x-dangling-references"] == f"job/{job['id']}"
    failed = deliver(client, job, PUSH, clock)
    assert failed.status_code == 201, failed.text
    assert failed.json()["status"] == "failed"
    assert "worker_queue_id" in failed.json()["skipped_reason"]
    assert "the job is disabled" in failed.json()["skipped_reason"]
    assert client.get(f"/api/v1/jobs/{job['id']}").json()["enabled"] is False
    again = deliver(client, job, PUSH, clock, webhook_id="msg_2")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "CONFLICT")  # disabled: nothing recorded
    assert len(runs(client, job["id"])) == 1
