"""References, one rule everywhere (issue #33), on every store: deleting what others name is 409 `IN_USE` listing
them; `force=true` deletes anyway and says what it left dangling; what names a deleted object can still be read,
changed and deleted, and fails once, saying why."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import create_agent
from tests.http.test_executions import setup_queue
from tests.support import bearer, make_jwt, wait_until

Client = TestClient[Any]


def _post(client: Client, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> str:
    response = client.post(path, json=body, headers=headers)
    assert response.status_code == 201, response.text
    value: str = response.json()["id"]
    return value


def _job(client: Client, name: str, target: dict[str, str], queue_id: str | None = None) -> str:
    queue_id = queue_id or setup_queue(client, f"q-{name}")[1]
    body = {"name": name, "trigger": {"type": "manual"}, "prompt": "go", "target": target, "worker_queue_id": queue_id}
    return _post(client, "/api/v1/jobs", body)


def _workflow(client: Client, name: str, **step: str) -> str:
    body = {"name": name, "steps": [{"id": "only", "prompt": "go", **step}]}
    return _post(client, "/api/v1/workflows", body)


def _witness(client: Client) -> str:
    """A cron job of every minute that fires: once it has fired after a clock advance, the scheduler has had its
    round at that time (a job that did not fire then never will)."""
    body = {"name": "witness", "trigger": {"type": "cron", "cron": "* * * * *"}, "prompt": "tick",
            "target": {"agent_id": create_agent(client, "witness")["id"]},
            "worker_queue_id": setup_queue(client, "witness")[1]}  # fmt: skip
    return _post(client, "/api/v1/jobs", body)


def _fired(client: Client, job: str) -> int:
    total: int = client.get(f"/api/v1/jobs/{job}/runs").json()["total"]
    return total


@dataclass
class Case:
    """What is deleted (its path), what names it (type, id, in the order a 409 lists them), and which of those a
    forced delete leaves dangling (the others are cascaded: a member leaves, an attachment goes)."""

    path: str
    referrers: list[tuple[str, str]]
    dangling: list[tuple[str, str]]


def _agent(client: Client) -> Case:
    agent = create_agent(client, "named")["id"]
    team = _post(client, "/api/v1/teams", {"name": "reasons", "configuration": {"reasoning": {"agent_id": agent}}})
    job = _job(client, "on-agent", {"agent_id": agent})
    workflow = _workflow(client, "on-agent", agent_id=agent)
    _, queue = setup_queue(client, "planning")
    plan = _post(client, "/api/v1/task-plans", {"task": "plan it", "worker_queue_id": queue, "agent_ids": [agent]})
    found = [("team", team), ("job", job), ("workflow", workflow), ("task_plan", plan)]
    return Case(f"/api/v1/agents/{agent}", found, found)


def _team(client: Client) -> Case:
    team = _post(client, "/api/v1/teams", {"name": "named"})
    member = create_agent(client, "member", team_id=team)["id"]
    job = _job(client, "on-team", {"team_id": team})
    return Case(f"/api/v1/teams/{team}", [("agent", member), ("job", job)], [("job", job)])


def _queue(client: Client) -> Case:
    _, queue = setup_queue(client, "named")
    agent = create_agent(client, "runner")["id"]
    job = _job(client, "on-queue", {"agent_id": agent}, queue)
    key = client.post("/api/v1/api-keys", json={"name": "bound", "role": "worker", "queue_ids": [queue]})
    assert key.status_code == 201, key.text
    found = [("job", job), ("api_key", key.json()["id"])]
    return Case(f"/api/v1/worker-queues/{queue}", found, found)


def _environment(client: Client) -> Case:
    environment, queue = setup_queue(client, "held")
    return Case(f"/api/v1/environments/{environment}", [("worker_queue", queue)], [])


def _workflow_case(client: Client) -> Case:
    workflow = _workflow(client, "named", agent_id=create_agent(client, "stepper")["id"])
    job = _job(client, "on-workflow", {"workflow_id": workflow})
    return Case(f"/api/v1/workflows/{workflow}", [("job", job)], [("job", job)])


def _secret(client: Client) -> Case:
    secret = _post(client, "/api/v1/secrets", {"name": "DB_PASSWORD", "value": "hunter2"})
    environment = {"env_vars": {"DB": "postgres://app:{{secret:DB_PASSWORD}}@db"}}
    agent = create_agent(client, "user", execution_environment=environment)["id"]
    custom = _post(client, "/api/v1/custom-integrations", {"name": "db", "secret_names": ["DB_PASSWORD"]})
    found = [("agent", agent), ("custom_integration", custom)]
    return Case(f"/api/v1/secrets/{secret}", found, found)


def _skill(client: Client) -> Case:
    skill = _post(client, "/api/v1/skills", {"name": "bash", "type": "shell"})
    agent = create_agent(client, "skilled", skill_ids=[skill])["id"]
    environment = _post(client, "/api/v1/environments", {"name": "skilled"})
    assert client.post(f"/api/v1/environments/{environment}/skills/{skill}").status_code in (200, 201)
    return Case(f"/api/v1/skills/{skill}", [("agent", agent), ("environment", environment)], [])


def _integration(client: Client) -> Case:
    body = {"name": "gh", "kind": "github", "configuration": {"token": "ghp_x"}}
    integration = _post(client, "/api/v1/integrations", body)
    agent = create_agent(client, "integrated", execution_environment={"integration_ids": [integration]})["id"]
    return Case(f"/api/v1/integrations/{integration}", [("agent", agent)], [("agent", agent)])


def _custom_integration(client: Client) -> Case:
    custom = _post(client, "/api/v1/custom-integrations", {"name": "tools"})
    team = _post(
        client, "/api/v1/teams", {"name": "tooled", "execution_environment": {"custom_integration_ids": [custom]}}
    )
    return Case(f"/api/v1/custom-integrations/{custom}", [("team", team)], [("team", team)])


def _project(client: Client) -> Case:
    project = _post(client, "/api/v1/projects", {"name": "apollo", "key": "APOLLO"})
    agent = create_agent(client, "crew")["id"]
    assert client.post(f"/api/v1/projects/{project}/agents/{agent}").status_code in (200, 201, 204)
    return Case(f"/api/v1/projects/{project}", [("agent", agent)], [])


def _model(client: Client) -> Case:
    model = _post(client, "/api/v1/models", {"value": "gpt-test", "provider": "openai"})
    by_value = create_agent(client, "by-value", model_id="gpt-test")["id"]
    by_id = create_agent(client, "by-id", model_id=model)["id"]
    team = _post(client, "/api/v1/teams", {"name": "speaks", "configuration": {"llm": {"model": "gpt-test"}}})
    found = [*sorted([("agent", by_value), ("agent", by_id)]), ("team", team)]
    return Case(f"/api/v1/models/{model}", found, found)


CASES: dict[str, Callable[[Client], Case]] = {
    "agent": _agent,
    "team": _team,
    "worker_queue": _queue,
    "environment": _environment,
    "workflow": _workflow_case,
    "secret": _secret,
    "skill": _skill,
    "integration": _integration,
    "custom_integration": _custom_integration,
    "project": _project,
    "model": _model,
}


def _listed(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"type": kind, "id": each} for kind, each in pairs]


@pytest.mark.parametrize("kind", list(CASES))
def test_deleting_what_others_name_is_in_use_and_force_says_what_dangles(client: Client, kind: str) -> None:
    case = CASES[kind](client)
    refused = client.delete(case.path)
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "IN_USE"
    assert error["details"] == {
        "resource": kind,
        "id": case.path.rsplit("/", 1)[1],
        "referrers": _listed(case.referrers),
        "more": False,
    }
    assert client.get(case.path).status_code == 200  # nothing was deleted
    assert client.delete(case.path, params={"force": "false"}).status_code == 409
    forced = client.delete(case.path, params={"force": "true"})
    assert forced.status_code == 204, forced.text
    expected = ", ".join(f"{kind}/{each}" for kind, each in case.dangling) or None
    assert forced.headers.get("x-dangling-references") == expected
    assert client.get(case.path).status_code == 404


@pytest.mark.parametrize("kind", list(CASES))
def test_what_nothing_names_deletes_at_once(client: Client, kind: str) -> None:
    case = CASES[kind](client)
    for referrer, each in case.referrers:  # a task plan is not deleted: cancelled, it names nothing any more
        if referrer == "task_plan":
            assert client.post(f"/api/v1/temporal-workflows/{each}/cancel").status_code == 200
    for _, referrer_path in _referrer_paths(case):
        assert client.delete(referrer_path).status_code == 204, referrer_path
    response = client.delete(case.path)
    assert response.status_code == 204, response.text
    assert "x-dangling-references" not in response.headers


def _referrer_paths(case: Case) -> list[tuple[str, str]]:
    plural = {"job": "jobs", "workflow": "workflows", "agent": "agents", "team": "teams", "api_key": "api-keys",
              "worker_queue": "worker-queues", "environment": "environments",
              "custom_integration": "custom-integrations"}  # fmt: skip
    return [(kind, f"/api/v1/{plural[kind]}/{each}") for kind, each in case.referrers if kind != "task_plan"]


def test_another_organizations_referrers_never_count(client: Client) -> None:
    other = bearer(make_jwt("org-other", sub="neighbour"))
    model = _post(client, "/api/v1/models", {"value": "shared-name", "provider": "openai"})
    secret = _post(client, "/api/v1/secrets", {"name": "SHARED", "value": "mine"})
    assert (
        client.post("/api/v1/agents", json={"name": "theirs", "model_id": "shared-name"}, headers=other).status_code
        == 201
    )
    _post(client, "/api/v1/secrets", {"name": "SHARED", "value": "theirs"}, headers=other)
    theirs = {"name": "theirs-too", "execution_environment": {"secrets": ["SHARED"]}}
    _post(client, "/api/v1/agents", theirs, headers=other)
    assert client.delete(f"/api/v1/models/{model}").status_code == 204
    assert client.delete(f"/api/v1/secrets/{secret}").status_code == 204


def test_a_409_lists_at_most_fifty_and_says_there_are_more(client: Client) -> None:
    team = _post(client, "/api/v1/teams", {"name": "crowd"})
    members = sorted(create_agent(client, f"m{index}", team_id=team)["id"] for index in range(51))
    error = client.delete(f"/api/v1/teams/{team}").json()["error"]
    assert error["details"]["referrers"] == _listed([("agent", each) for each in members[:50]])
    assert error["details"]["more"] is True
    assert client.delete(f"/api/v1/teams/{team}", params={"force": "true"}).status_code == 204
    assert all(client.get(f"/api/v1/agents/{each}").json()["team_id"] is None for each in members)


def test_a_job_whose_target_is_gone_can_be_read_disabled_retargeted_and_deleted(client: Client) -> None:
    agent = create_agent(client, "doomed")["id"]
    job = _job(client, "orphan", {"agent_id": agent})
    assert client.delete(f"/api/v1/agents/{agent}", params={"force": "true"}).status_code == 204
    assert client.get(f"/api/v1/jobs/{job}").json()["target"] == {"agent_id": agent}
    disabled = client.patch(f"/api/v1/jobs/{job}", json={"enabled": False})
    assert disabled.status_code == 200, disabled.text
    assert disabled.json()["enabled"] is False
    assert client.patch(f"/api/v1/jobs/{job}", json={"name": "renamed"}).status_code == 200
    nobody = "00000000-0000-4000-8000-000000000000"
    wrong = client.patch(f"/api/v1/jobs/{job}", json={"target": {"agent_id": nobody}})
    assert wrong.status_code == 422  # a new target must exist
    replacement = create_agent(client, "replacement")["id"]
    moved = client.patch(f"/api/v1/jobs/{job}", json={"target": {"agent_id": replacement}, "enabled": True})
    assert moved.status_code == 200, moved.text
    assert client.post(f"/api/v1/jobs/{job}/trigger").json()["status"] == "fired"
    assert client.delete(f"/api/v1/jobs/{job}").status_code == 204


def test_a_cron_job_whose_target_is_gone_fails_once_saying_why_and_stops(client: Client, clock: ManualClock) -> None:
    agent = create_agent(client, "doomed")["id"]
    body = {"name": "every-minute", "trigger": {"type": "cron", "cron": "* * * * *"}, "prompt": "go",
            "target": {"agent_id": agent}, "worker_queue_id": setup_queue(client, "cron")[1]}  # fmt: skip
    job = _post(client, "/api/v1/jobs", body)
    assert client.delete(f"/api/v1/agents/{agent}", params={"force": "true"}).status_code == 204
    clock.advance(60)
    wait_until(lambda: client.get(f"/api/v1/jobs/{job}").json()["enabled"] is False)
    runs = client.get(f"/api/v1/jobs/{job}/runs").json()["items"]
    assert [run["status"] for run in runs] == ["failed"]
    assert f"agent '{agent}' not found" in runs[0]["skipped_reason"]
    assert "the job is disabled" in runs[0]["skipped_reason"]
    assert client.get(f"/api/v1/jobs/{job}").json()["next_run_at"] is None
    witness = _witness(client)
    clock.advance(180)  # no further firing: it is disabled
    wait_until(lambda: _fired(client, witness) == 1)
    assert _fired(client, job) == 1


def test_the_409_is_documented_with_the_force_parameter_and_the_header(client: Client) -> None:
    document = client.get("/api/openapi.json").json()
    for path in ("/api/v1/agents/{agent_id}", "/api/v1/secrets/{secret_id}", "/api/v1/worker-queues/{queue_id}"):
        operation = document["paths"][path]["delete"]
        assert "409" in operation["responses"]
        assert "X-Dangling-References" in operation["responses"]["204"]["headers"]
        assert any(parameter["name"] == "force" for parameter in operation["parameters"])


def test_a_cron_job_whose_workflow_step_names_a_gone_agent_stops_after_one_run(
    client: Client, clock: ManualClock
) -> None:
    agent = create_agent(client, "stepper")["id"]
    workflow = _workflow(client, "flow", agent_id=agent)
    body = {"name": "every-minute", "trigger": {"type": "cron", "cron": "* * * * *"}, "prompt": "go",
            "target": {"workflow_id": workflow}, "worker_queue_id": setup_queue(client, "cron")[1]}  # fmt: skip
    job = _post(client, "/api/v1/jobs", body)
    forced = client.delete(f"/api/v1/agents/{agent}", params={"force": "true"})
    assert forced.headers["x-dangling-references"] == f"workflow/{workflow}"
    clock.advance(60)
    wait_until(lambda: client.get(f"/api/v1/jobs/{job}").json()["enabled"] is False)
    [run] = client.get(f"/api/v1/jobs/{job}/runs").json()["items"]
    assert client.get(f"/api/v1/workflow-runs/{run['workflow_run_id']}").json()["status"] == "failed"
    assert f"agent '{agent}' no longer exists" in run["skipped_reason"]
    assert "the job is disabled" in run["skipped_reason"]
    witness = _witness(client)
    clock.advance(180)
    wait_until(lambda: _fired(client, witness) == 1)
    assert _fired(client, job) == 1


def test_a_forced_delete_is_in_the_audit_log_with_what_it_passed_over(client: Client) -> None:
    case = _model(client)
    assert client.delete(case.path, params={"force": "true"}).status_code == 204
    model_id = case.path.rsplit("/", 1)[1]
    events = client.get("/api/v1/audit-events", params={"resource_id": model_id}).json()["items"]
    by_action = {event["action"]: event for event in events}
    assert {"llm_model.create", "llm_model.delete", "llm_model.delete_forced"} <= set(by_action)
    forced = by_action["llm_model.delete_forced"]
    assert (forced["resource_type"], forced["outcome"]) == ("llm_model", "succeeded")
    assert forced["details"] == {"referrers": _listed(case.referrers), "more": False}
