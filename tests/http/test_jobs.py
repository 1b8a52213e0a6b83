"""Jobs over HTTP, on every store: fields, rules, manual triggers and runs, the scheduler, roles, isolation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import assert_validation, create_agent
from tests.http.test_executions import setup_queue
from tests.support import bearer, make_jwt, wait_until

JOB_FIELDS = {
    "id", "organization_id", "name", "enabled", "trigger", "target", "prompt", "worker_queue_id", "overlap", "misfire",
    "next_run_at", "webhook_url", "webhook_secret", "created_at", "updated_at",
}  # fmt: skip
RUN_FIELDS = {
    "id", "job_id", "trigger", "fired_at", "scheduled_for", "status", "execution_id", "workflow_run_id",
    "skipped_reason", "webhook_id",
}  # fmt: skip


def job_body(client: TestClient[Any], name: str = "nightly", **fields: Any) -> dict[str, Any]:
    if "target" not in fields:
        fields["target"] = {"agent_id": create_agent(client, f"agent-{name}")["id"]}
    if "worker_queue_id" not in fields:
        fields["worker_queue_id"] = setup_queue(client, f"queue-{name}")[1]
    return {"name": name, "trigger": {"type": "manual"}, "prompt": "summarise the day", **fields}


def create_job(client: TestClient[Any], name: str = "nightly", **fields: Any) -> dict[str, Any]:
    response = client.post("/api/v1/jobs", json=job_body(client, name, **fields))
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def runs(client: TestClient[Any], job_id: str) -> list[dict[str, Any]]:
    response = client.get(f"/api/v1/jobs/{job_id}/runs")
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def test_create_returns_the_whole_job(client: TestClient[Any]) -> None:
    body = create_job(client, trigger={"type": "cron", "cron": "0 3 * * *", "timezone": "Europe/Paris"})
    assert set(body) == JOB_FIELDS
    assert body["trigger"] == {"type": "cron", "cron": "0 3 * * *", "timezone": "Europe/Paris"}
    assert set(body["target"]) == {"agent_id"}
    assert (body["enabled"], body["overlap"], body["misfire"]) == (True, "allow", "fire_once")
    assert (body["webhook_url"], body["webhook_secret"]) == (None, None)
    assert body["next_run_at"] == "2026-01-01T02:00:00Z"  # 03:00 in Paris (UTC+1 in January), after the clock
    assert client.get(f"/api/v1/jobs/{body['id']}").json() == body
    listed = client.get("/api/v1/jobs").json()
    assert (listed["total"], listed["items"]) == (1, [body])


def test_a_cron_trigger_defaults_to_utc_and_manual_jobs_have_no_next_run(client: TestClient[Any]) -> None:
    cron = create_job(client, "a", trigger={"type": "cron", "cron": "*/15 * * * *"})
    assert cron["trigger"]["timezone"] == "UTC"
    assert cron["next_run_at"] == "2026-01-01T00:15:00Z"
    assert create_job(client, "b")["next_run_at"] is None


def test_invalid_bodies_are_422_naming_the_field(client: TestClient[Any]) -> None:
    base = job_body(client, "x")
    agent_id, nobody = base["target"]["agent_id"], "00000000-0000-4000-8000-000000000000"
    cases: list[tuple[dict[str, Any], list[Any]]] = [
        ({"trigger": {"type": "cron", "cron": "61 * * * *"}}, ["body", "trigger", "cron"]),
        ({"trigger": {"type": "cron", "cron": "* * * *"}}, ["body", "trigger", "cron"]),
        ({"trigger": {"type": "cron", "cron": "* * * * * *"}}, ["body", "trigger", "cron"]),
        ({"trigger": {"type": "cron", "cron": "0 3 * * *", "timezone": "Mars/X"}}, ["body", "trigger", "timezone"]),
        ({"trigger": {"type": "hourly"}}, ["body", "trigger", "type"]),
        ({"trigger": {"type": "webhook", "cron": "* * * * *"}}, ["body", "trigger", "cron"]),
        ({"target": {}}, ["body", "target"]),
        ({"target": {"agent_id": agent_id, "team_id": agent_id}}, ["body", "target"]),
        ({"target": {"agent_id": nobody}}, ["body", "target", "agent_id"]),
        ({"target": {"workflow_id": nobody}}, ["body", "target", "workflow_id"]),
        ({"worker_queue_id": None}, ["body", "worker_queue_id"]),
        ({"worker_queue_id": nobody}, ["body", "worker_queue_id"]),
        ({"prompt": "   "}, ["body", "prompt"]),
        ({"overlap": "queue"}, ["body", "overlap"]),
        ({"misfire": "all"}, ["body", "misfire"]),
        ({"next_run_at": "2026-01-01T00:00:00Z"}, ["body", "next_run_at"]),
    ]  # fmt: skip
    for change, loc in cases:
        assert_validation(client.post("/api/v1/jobs", json={**base, **change}), loc)
    workflow = client.post("/api/v1/jobs", json={**base, "target": {"workflow_id": base["target"]["agent_id"]}})
    assert "no workflow of this organization has this id" in workflow.text
    assert client.get("/api/v1/jobs").json()["total"] == 0


def test_duplicate_name_is_409_and_patch_changes_only_the_given_fields(client: TestClient[Any]) -> None:
    job = create_job(client)
    again = client.post("/api/v1/jobs", json=job_body(client, "nightly", target=job["target"],
                                                      worker_queue_id=job["worker_queue_id"]))  # fmt: skip
    assert again.status_code == 409
    assert again.json()["error"]["details"]["field"] == "name"
    changed = client.patch(f"/api/v1/jobs/{job['id']}", json={"overlap": "skip", "enabled": False})
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["overlap"], body["enabled"], body["prompt"], body["name"]) == ("skip", False, job["prompt"], "nightly")
    cron = client.patch(f"/api/v1/jobs/{job['id']}", json={"trigger": {"type": "cron", "cron": "0 * * * *"}}).json()
    assert cron["next_run_at"] is None  # disabled
    enabled = client.patch(f"/api/v1/jobs/{job['id']}", json={"enabled": True}).json()
    assert enabled["next_run_at"] == "2026-01-01T01:00:00Z"
    assert_validation(client.patch(f"/api/v1/jobs/{job['id']}", json={"name": ""}), ["body", "name"])


def test_delete_removes_the_job_and_its_runs_not_the_executions(client: TestClient[Any]) -> None:
    job = create_job(client)
    run = client.post(f"/api/v1/jobs/{job['id']}/trigger").json()
    assert client.delete(f"/api/v1/jobs/{job['id']}").status_code == 204
    assert client.get(f"/api/v1/jobs/{job['id']}").status_code == 404
    assert client.get(f"/api/v1/jobs/{job['id']}/runs").status_code == 404
    assert client.get(f"/api/v1/executions/{run['execution_id']}").status_code == 200
    assert client.delete(f"/api/v1/jobs/{job['id']}").status_code == 404


def test_a_manual_trigger_creates_an_execution_and_a_run(client: TestClient[Any], clock: ManualClock) -> None:
    job = create_job(client, prompt="report on {{payload.topic}} for {{payload.who.name}}{{payload.missing}}")
    response = client.post(
        f"/api/v1/jobs/{job['id']}/trigger", json={"payload": {"topic": "sales", "who": {"name": "Ann"}}}
    )
    assert response.status_code == 201, response.text
    run = response.json()
    assert set(run) == RUN_FIELDS
    assert (run["trigger"], run["status"], run["skipped_reason"], run["scheduled_for"]) == (
        "manual",
        "fired",
        None,
        None,
    )
    execution = client.get(f"/api/v1/executions/{run['execution_id']}").json()
    assert (execution["prompt"], execution["status"]) == ("report on sales for Ann", "queued")
    assert execution["agent_id"] == job["target"]["agent_id"]
    assert execution["worker_queue_id"] == job["worker_queue_id"]
    clock.advance(1)
    without_body = client.post(f"/api/v1/jobs/{job['id']}/trigger")
    assert without_body.status_code == 201
    assert [item["id"] for item in runs(client, job["id"])] == [without_body.json()["id"], run["id"]]


def test_a_team_job_fires_a_team_execution(client: TestClient[Any]) -> None:
    team = client.post("/api/v1/teams", json={"name": "crew"}).json()
    job = create_job(client, target={"team_id": team["id"]})
    run = client.post(f"/api/v1/jobs/{job['id']}/trigger").json()
    assert client.get(f"/api/v1/executions/{run['execution_id']}").json()["team_id"] == team["id"]


def test_overlap_skip_skips_while_the_previous_execution_runs(client: TestClient[Any]) -> None:
    job = create_job(client, overlap="skip")
    first = client.post(f"/api/v1/jobs/{job['id']}/trigger").json()
    second = client.post(f"/api/v1/jobs/{job['id']}/trigger").json()
    assert (second["status"], second["execution_id"]) == ("skipped", None)
    assert second["skipped_reason"].startswith("overlap")
    assert client.post(f"/api/v1/executions/{first['execution_id']}/cancel").status_code == 200
    assert client.post(f"/api/v1/jobs/{job['id']}/trigger").json()["status"] == "fired"
    allowed = create_job(client, "allowed")
    for _ in range(2):
        assert client.post(f"/api/v1/jobs/{allowed['id']}/trigger").json()["status"] == "fired"


def test_a_firing_whose_target_is_gone_is_a_failed_run(client: TestClient[Any]) -> None:
    job = create_job(client)
    gone = client.delete(f"/api/v1/agents/{job['target']['agent_id']}", params={"force": "true"})
    assert gone.headers["x-dangling-references"] == f"job/{job['id']}"
    run = client.post(f"/api/v1/jobs/{job['id']}/trigger").json()
    assert (run["status"], run["execution_id"]) == ("failed", None)
    assert "not found" in run["skipped_reason"]
    assert client.get(f"/api/v1/jobs/{job['id']}").json()["enabled"] is True  # a person's trigger only fails


def test_the_scheduler_fires_a_due_cron_job_once(client: TestClient[Any], clock: ManualClock) -> None:
    job = create_job(client, trigger={"type": "cron", "cron": "*/5 * * * *"})
    assert job["next_run_at"] == "2026-01-01T00:05:00Z"
    clock.advance(5 * 60)
    wait_until(lambda: len(runs(client, job["id"])) == 1)
    run = runs(client, job["id"])[0]
    assert (run["trigger"], run["status"], run["scheduled_for"]) == ("cron", "fired", "2026-01-01T00:05:00Z")
    assert client.get(f"/api/v1/executions/{run['execution_id']}").json()["prompt"] == "summarise the day"
    wait_until(lambda: client.get(f"/api/v1/jobs/{job['id']}").json()["next_run_at"] == "2026-01-01T00:10:00Z")
    assert len(runs(client, job["id"])) == 1


def test_roles_viewers_read_members_write(client: TestClient[Any]) -> None:
    job = create_job(client)
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.get(f"/api/v1/jobs/{job['id']}", headers=viewer).status_code == 200
    assert client.get(f"/api/v1/jobs/{job['id']}/runs", headers=viewer).status_code == 200
    assert client.post(f"/api/v1/jobs/{job['id']}/trigger", headers=viewer).status_code == 403
    assert client.patch(f"/api/v1/jobs/{job['id']}", json={"enabled": False}, headers=viewer).status_code == 403
    assert client.delete(f"/api/v1/jobs/{job['id']}", headers=viewer).status_code == 403
    assert client.post("/api/v1/jobs", json=job_body(client, "v"), headers=viewer).status_code == 403
    member = bearer(make_jwt("default", roles=["member"]))
    assert client.post(f"/api/v1/jobs/{job['id']}/trigger", headers=member).status_code == 201


def test_another_organization_sees_nothing(client: TestClient[Any], other_org: dict[str, str]) -> None:
    job = create_job(client)
    for method, path in (("GET", ""), ("PATCH", ""), ("DELETE", ""), ("POST", "/trigger"), ("GET", "/runs"),
                         ("POST", "/rotate-secret")):  # fmt: skip
        body = {"enabled": False} if method == "PATCH" else None
        response = client.request(method, f"/api/v1/jobs/{job['id']}{path}", json=body, headers=other_org)
        assert response.status_code == 404, (method, path, response.text)
    assert client.get("/api/v1/jobs", headers=other_org).json()["total"] == 0
    queue = job["worker_queue_id"]
    foreign = client.post("/api/v1/jobs", json=job_body(client, "mine", worker_queue_id=queue), headers=other_org)
    assert foreign.status_code == 422  # the target and the queue are another organization's
    assert runs(client, job["id"]) == []


def test_timestamps_follow_the_clock(client: TestClient[Any], clock: ManualClock) -> None:
    job = create_job(client)
    clock.advance(60)
    changed = client.patch(f"/api/v1/jobs/{job['id']}", json={"prompt": "new"}).json()
    assert changed["created_at"] == job["created_at"]
    expected = (datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=60)).isoformat().replace("+00:00", "Z")
    assert changed["updated_at"] == expected
