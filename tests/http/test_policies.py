"""Policies over HTTP on every store, with real Rego: compiled on save, deciding the guarded actions, logged."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import create_agent
from tests.http.test_executions import execute, setup_queue
from tests.http.test_jobs import create_job, job_body, runs
from tests.http.test_secrets import create_secret
from tests.http.test_workflows import create_workflow, step
from tests.support import BEFORE_THE_STORE, DEFAULT_ORG, bearer, make_jwt, wait_until

BUSINESS_HOURS = """package acme.hours
import rego.v1

# Executions on the night queue only between 09:00 and 17:00 (UTC), Monday to Friday.
deny contains msg if {
    input.action == "execute"
    input.request.worker_queue_id == data.acme.hours.night_queue
    not in_business_hours
    msg := "executions on this queue run in business hours only"
}

in_business_hours if {
    [hour, _, _] := time.clock([input.time, "UTC"])
    hour >= 9
    hour < 17
    not time.weekday(input.time) in {"Saturday", "Sunday"}
}
"""

FORBIDDEN_WORD = """package prompts
import rego.v1

deny contains sprintf("the prompt may not mention %s", [word]) if {
    some word in ["password", "exploit"]
    contains(lower(input.request.prompt), word)
}
"""

ADMINS_ONLY = """package roles
import rego.v1

deny contains "only admins may do this" if not "admin" in input.principal.roles
"""


def create_policy(client: TestClient[Any], name: str, rego: str, actions: list[str], **fields: Any) -> Any:
    response = client.post("/api/v1/policies", json={"name": name, "rego": rego, "actions": actions, **fields})
    assert response.status_code == 201, response.text
    return response.json()


def decisions(client: TestClient[Any], **params: Any) -> list[dict[str, Any]]:
    """The decisions in the order they were made (the list's default is newest first)."""
    response = client.get("/api/v1/policy-decisions", params={"order": "asc", **params})
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def execute_status(client: TestClient[Any], agent: str, queue: str, prompt: str = "hello") -> Any:
    return client.post(f"/api/v1/agents/{agent}/execute", json={"prompt": prompt, "worker_queue_id": queue})


def test_a_policy_is_stored_whole_and_changed_field_by_field(client: TestClient[Any]) -> None:
    created = create_policy(client, "prompts", FORBIDDEN_WORD, ["execute"], description="no secrets in prompts")
    assert {k: created[k] for k in ("name", "description", "enabled", "enforcement", "actions", "rego")} == {
        "name": "prompts", "description": "no secrets in prompts", "enabled": True, "enforcement": "enforce",
        "actions": ["execute"], "rego": FORBIDDEN_WORD,
    }  # fmt: skip
    assert created["organization_id"] == DEFAULT_ORG
    patched = client.patch(f"/api/v1/policies/{created['id']}", json={"enforcement": "audit", "enabled": False})
    assert patched.status_code == 200, patched.text
    assert (patched.json()["enforcement"], patched.json()["enabled"], patched.json()["rego"]) == (
        "audit", False, FORBIDDEN_WORD,
    )  # fmt: skip
    assert client.get(f"/api/v1/policies/{created['id']}").json() == patched.json()
    listed = client.get("/api/v1/policies").json()
    assert (listed["total"], [p["id"] for p in listed["items"]]) == (1, [created["id"]])
    duplicate = client.post("/api/v1/policies", json={"name": "prompts", "rego": ADMINS_ONLY, "actions": ["execute"]})
    assert (duplicate.status_code, duplicate.json()["error"]["code"]) == (409, "CONFLICT")
    assert client.delete(f"/api/v1/policies/{created['id']}").status_code == 204
    assert client.get(f"/api/v1/policies/{created['id']}").status_code == 404


def test_a_module_that_does_not_compile_is_422_with_the_compilers_message_and_line(client: TestClient[Any]) -> None:
    broken = "package broken\nimport rego.v1\n\ndeny contains msg if {\n    msg := \n}\n"
    response = client.post("/api/v1/policies", json={"name": "broken", "rego": broken, "actions": ["execute"]})
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert (error["details"]["field"], error["details"]["line"]) == ("rego", 5)
    assert "Invalid assignment operator" in error["message"]
    assert "line 5" in error["message"]
    assert response.json()["detail"][0]["loc"] == ["body", "rego"]
    unknown = "package p\nimport rego.v1\n\ndeny contains msg if {\n    msg := no_such_function(input)\n}\n"
    response = client.post("/api/v1/policies", json={"name": "unknown", "rego": unknown, "actions": ["execute"]})
    assert response.status_code == 422, response.text
    assert "no_such_function" in response.json()["error"]["message"]
    assert response.json()["error"]["details"]["line"] == 5
    policy = create_policy(client, "fine", ADMINS_ONLY, ["execute"])
    patched = client.patch(f"/api/v1/policies/{policy['id']}", json={"rego": broken})
    assert (patched.status_code, patched.json()["error"]["details"]["line"]) == (422, 5)
    no_deny_rule = {"name": "x", "rego": "package p\nallow := true\n", "actions": ["execute"]}
    no_deny = client.post("/api/v1/policies", json=no_deny_rule)
    assert no_deny.status_code == 422
    assert "deny" in no_deny.json()["error"]["message"]


@pytest.mark.parametrize(
    "body",
    [
        {"name": "x", "rego": ADMINS_ONLY, "actions": []},
        {"name": "x", "rego": ADMINS_ONLY, "actions": ["delete.everything"]},
        {"name": "x", "rego": ADMINS_ONLY, "actions": ["execute"], "enforcement": "maybe"},
        {"name": "x", "rego": ADMINS_ONLY, "actions": ["execute", "execute"]},
        {"name": "x", "actions": ["execute"]},
        {"name": "x", "rego": ADMINS_ONLY, "actions": ["execute"], "organization_id": "other"},
    ],
)
@BEFORE_THE_STORE
def test_invalid_bodies_are_422(client: TestClient[Any], body: dict[str, Any]) -> None:
    response = client.post("/api/v1/policies", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_admins_write_policies_members_and_viewers_read_them(client: TestClient[Any]) -> None:
    policy = create_policy(client, "roles", ADMINS_ONLY, ["job.create"])
    for role in ("member", "viewer"):
        headers = bearer(make_jwt(DEFAULT_ORG, roles=[role]))
        assert client.get(f"/api/v1/policies/{policy['id']}", headers=headers).status_code == 200
        assert client.get("/api/v1/policy-decisions", headers=headers).status_code == 200
        body = {"name": role, "rego": ADMINS_ONLY, "actions": ["execute"]}
        for response in (
            client.post("/api/v1/policies", json=body, headers=headers),
            client.patch(f"/api/v1/policies/{policy['id']}", json={"enabled": False}, headers=headers),
            client.delete(f"/api/v1/policies/{policy['id']}", headers=headers),
        ):
            assert (response.status_code, response.json()["error"]["code"]) == (403, "FORBIDDEN")


def test_execute_on_a_queue_outside_business_hours_is_denied(client: TestClient[Any], clock: ManualClock) -> None:
    _, night = setup_queue(client, "night")
    _, day = setup_queue(client, "day")
    agent = create_agent(client)["id"]
    rego = BUSINESS_HOURS.replace("data.acme.hours.night_queue", f'"{night}"')
    policy = create_policy(client, "business-hours", rego, ["execute"])
    assert clock.now().hour == 0  # Thursday 1 January 2026, midnight
    refused = execute_status(client, agent, night)
    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert error["code"] == "POLICY_DENIED"
    assert error["details"]["messages"] == ["executions on this queue run in business hours only"]
    assert error["details"]["policies"][0]["policy_id"] == policy["id"]
    assert client.get("/api/v1/executions").json()["total"] == 0
    clock.advance(1)
    execute(client, agent, day)  # another queue: no message
    clock.advance(10 * 3600)  # 10:00
    execute(client, agent, night)
    clock.advance(2 * 24 * 3600)  # Saturday 10:00
    assert execute_status(client, agent, night).status_code == 403
    logged = decisions(client, policy_id=policy["id"])
    assert [d["allowed"] for d in logged] == [False, True, True, False]
    assert {d["action"] for d in logged} == {"execute"}
    assert logged[0]["resource"] == {"type": "agent", "id": agent}
    assert logged[0]["principal"] == {"subject": "service", "roles": ["admin"]}


def test_a_prompt_containing_a_word_is_denied_and_the_decision_logged(
    client: TestClient[Any], clock: ManualClock
) -> None:
    _, queue = setup_queue(client)
    agent = create_agent(client)["id"]
    team = client.post("/api/v1/teams", json={"name": "crew"}).json()["id"]
    policy = create_policy(client, "prompts", FORBIDDEN_WORD, ["execute"])
    refused = execute_status(client, agent, queue, "Tell me the admin PASSWORD")
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["details"]["messages"] == ["the prompt may not mention password"]
    clock.advance(1)
    team_refused = client.post(
        f"/api/v1/teams/{team}/execute", json={"prompt": "an exploit please", "worker_queue_id": queue}
    )
    assert team_refused.status_code == 403, team_refused.text
    execute(client, agent, queue, "Summarise the news")
    denied = decisions(client, allowed="false")
    assert [(d["policy_id"], d["deny"], d["resource"]["type"]) for d in denied] == [
        (policy["id"], ["the prompt may not mention password"], "agent"),
        (policy["id"], ["the prompt may not mention exploit"], "team"),
    ]
    assert [d["deny"] for d in decisions(client, allowed="true")] == [[]]


def test_allow_by_role(client: TestClient[Any], clock: ManualClock) -> None:
    _, queue = setup_queue(client)
    agent = create_agent(client)["id"]
    create_policy(client, "admins-only", ADMINS_ONLY, ["execute"])
    member = bearer(make_jwt(DEFAULT_ORG, sub="mia", roles=["member"]))
    response = client.post(
        f"/api/v1/agents/{agent}/execute", json={"prompt": "hi", "worker_queue_id": queue}, headers=member
    )
    assert (response.status_code, response.json()["error"]["code"]) == (403, "POLICY_DENIED")
    clock.advance(1)
    execute(client, agent, queue)  # the service key is an admin
    logged = decisions(client)
    assert [(d["principal"]["subject"], d["principal"]["roles"], d["allowed"]) for d in logged] == [
        ("mia", ["member"], False),
        ("service", ["admin"], True),
    ]


def test_a_policy_that_fails_to_evaluate_denies(client: TestClient[Any], clock: ManualClock) -> None:
    _, queue = setup_queue(client)
    agent = create_agent(client)["id"]
    # Five characters divide by zero: the evaluation fails, and the action with it (fail closed).
    rego = 'package fragile\nimport rego.v1\n\ndeny contains "long" if 100 / (count(input.request.prompt) - 5) < 1\n'
    policy = create_policy(client, "fragile", rego, ["execute"])
    refused = execute_status(client, agent, queue, "hello")
    assert refused.status_code == 403, refused.text
    details = refused.json()["error"]["details"]
    assert "could not be evaluated" in details["messages"][0]
    assert details["policies"][0]["error"]
    clock.advance(1)
    execute(client, agent, queue, "hello there")
    logged = decisions(client, policy_id=policy["id"])
    assert [(d["allowed"], d["error"] is not None) for d in logged] == [(False, True), (True, False)]


def test_an_audit_policy_records_and_allows(client: TestClient[Any]) -> None:
    _, queue = setup_queue(client)
    agent = create_agent(client)["id"]
    audit = create_policy(client, "watch", FORBIDDEN_WORD, ["execute"], enforcement="audit")
    execution = execute(client, agent, queue, "forgot my password")
    assert execution["status"] == "queued"
    (logged,) = decisions(client)
    assert (logged["policy_id"], logged["enforcement"], logged["allowed"]) == (audit["id"], "audit", False)
    assert logged["deny"] == ["the prompt may not mention password"]


def test_a_disabled_policy_decides_nothing_and_logs_nothing(client: TestClient[Any]) -> None:
    _, queue = setup_queue(client)
    agent = create_agent(client)["id"]
    policy = create_policy(client, "prompts", FORBIDDEN_WORD, ["execute"], enabled=False)
    execute(client, agent, queue, "password")
    assert decisions(client) == []
    assert client.patch(f"/api/v1/policies/{policy['id']}", json={"enabled": True}).status_code == 200
    assert execute_status(client, agent, queue, "password").status_code == 403
    assert client.delete(f"/api/v1/policies/{policy['id']}").status_code == 204
    execute(client, agent, queue, "password")
    assert [d["policy_name"] for d in decisions(client)] == ["prompts"]  # the deleted policy's decision stays


def test_every_guarded_action_is_decided(client: TestClient[Any], clock: ManualClock) -> None:
    rego = """package freeze
import rego.v1

deny contains sprintf("%s is frozen", [input.action]) if input.principal.subject == "frozen"
deny contains "the scheduler is frozen" if {
    input.action == "job.fire"
    input.principal.subject == null
}
deny contains "never seen" if input.request.value
"""
    actions = ["execute", "workflow.run", "job.create", "job.fire", "secret.write"]
    frozen = bearer(make_jwt(DEFAULT_ORG, sub="frozen", roles=["member"]))
    _, queue = setup_queue(client)
    agent = create_agent(client)["id"]
    workflow = create_workflow(client, [step("only", agent)])
    job = create_job(client, "by-hand", target={"agent_id": agent}, worker_queue_id=queue)
    cron = create_job(client, "cron", target={"agent_id": agent}, worker_queue_id=queue,
                      trigger={"type": "cron", "cron": "*/5 * * * *"})  # fmt: skip
    secret = create_secret(client, "TOKEN")
    create_policy(client, "freeze", rego, actions)
    attempts = {
        "execute": ("POST", f"/api/v1/agents/{agent}/execute", {"prompt": "hi", "worker_queue_id": queue}),
        "workflow.run": ("POST", f"/api/v1/workflows/{workflow['id']}/runs", {"worker_queue_id": queue}),
        "job.create": ("POST", "/api/v1/jobs", job_body(client, "new", target={"agent_id": agent})),
        "job.fire": ("POST", f"/api/v1/jobs/{job['id']}/trigger", {}),
        "secret.write": ("PATCH", f"/api/v1/secrets/{secret['id']}", {"value": "new value"}),
    }
    for action, (method, path, body) in attempts.items():
        refused = client.request(method, path, json=body, headers=frozen)
        assert refused.status_code == 403, (action, refused.text)
        assert refused.json()["error"]["details"]["messages"] == [f"{action} is frozen"]
    assert runs(client, job["id"]) == []
    assert create_secret(client, "OTHER", "a value no policy sees")["version"] == 1  # the admin may
    clock.advance(5 * 60)  # the scheduler's firing is denied: recorded as skipped, and the job moves on
    wait_until(lambda: len(runs(client, cron["id"])) == 1)
    (skipped,) = runs(client, cron["id"])
    assert (skipped["status"], skipped["execution_id"]) == ("skipped", None)
    assert "the scheduler is frozen" in skipped["skipped_reason"]
    denied = {d["action"] for d in decisions(client, allowed="false")}
    assert denied == set(actions)
    assert decisions(client, action="secret.write", allowed="true")[0]["resource"]["type"] == "secret"


def test_the_dry_run_decides_without_logging(client: TestClient[Any], clock: ManualClock) -> None:
    audit = create_policy(client, "watch", FORBIDDEN_WORD, ["execute"], enforcement="audit")
    clock.advance(1)  # the policies are evaluated (and answered) in the order they were created
    enforce = create_policy(client, "admins-only", ADMINS_ONLY, ["execute", "job.create"])
    member = bearer(make_jwt(DEFAULT_ORG, sub="mia", roles=["member"]))
    body = {"action": "execute", "resource": {"type": "agent", "id": None}, "request": {"prompt": "exploit"}}
    response = client.post("/api/v1/policies/evaluate", json=body, headers=member)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "allowed": False,
        "decisions": [
            {"policy_id": audit["id"], "policy_name": "watch", "enforcement": "audit",
             "deny": ["the prompt may not mention exploit"], "error": None},
            {"policy_id": enforce["id"], "policy_name": "admins-only", "enforcement": "enforce",
             "deny": ["only admins may do this"], "error": None},
        ],
    }  # fmt: skip
    as_admin = client.post("/api/v1/policies/evaluate", json=body).json()
    assert as_admin["allowed"] is True
    assert as_admin["decisions"][1]["deny"] == []
    nothing = client.post("/api/v1/policies/evaluate", json={**body, "action": "secret.write"}).json()
    assert nothing == {"allowed": True, "decisions": []}
    assert decisions(client) == []
    bad = client.post("/api/v1/policies/evaluate", json={"action": "fly", "resource": {"type": "agent"}})
    assert bad.status_code == 422


def test_the_decision_log_filters_and_pages(client: TestClient[Any], clock: ManualClock) -> None:
    _, queue = setup_queue(client)
    agent = create_agent(client)["id"]
    first = create_policy(client, "prompts", FORBIDDEN_WORD, ["execute"])
    second = create_policy(client, "watch", ADMINS_ONLY, ["execute"], enforcement="audit")
    execute(client, agent, queue, "one")
    clock.advance(60)
    assert execute_status(client, agent, queue, "password").status_code == 403
    clock.advance(60)
    execute(client, agent, queue, "three")
    assert len(decisions(client)) == 6
    assert [d["allowed"] for d in decisions(client, policy_id=first["id"])] == [True, False, True]
    assert len(decisions(client, policy_id=second["id"], allowed="true")) == 3
    assert decisions(client, action="job.create") == []
    window = decisions(client, **{"from": "2026-01-01T00:01:00Z", "to": "2026-01-01T00:02:00Z"})
    assert sorted((d["policy_name"], d["allowed"]) for d in window) == [("prompts", False), ("watch", True)]
    assert len(decisions(client, **{"from": "2026-01-01T00:01:00"})) == 4  # no zone: UTC
    page = client.get("/api/v1/policy-decisions", params={"limit": 4, "offset": 4}).json()
    assert (page["total"], len(page["items"]), page["limit"], page["offset"]) == (6, 2, 4, 4)
    assert len({d["evaluation_id"] for d in window}) == 1  # one execute, both policies
    for params in ({"allowed": "perhaps"}, {"action": "fly"}, {"from": "yesterday"}, {"color": "red"},
                   {"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}):  # fmt: skip
        assert client.get("/api/v1/policy-decisions", params=params).status_code == 422, params


def test_another_organization_sees_nothing(client: TestClient[Any], other_org: dict[str, str]) -> None:
    _, queue = setup_queue(client)
    agent = create_agent(client)["id"]
    policy = create_policy(client, "prompts", FORBIDDEN_WORD, ["execute"])
    assert execute_status(client, agent, queue, "password").status_code == 403
    assert client.get(f"/api/v1/policies/{policy['id']}", headers=other_org).status_code == 404
    assert client.get("/api/v1/policies", headers=other_org).json()["total"] == 0
    assert client.get("/api/v1/policy-decisions", headers=other_org).json()["total"] == 0
    admin_elsewhere = bearer(make_jwt("org-other", roles=["admin"]))
    for response in (
        client.patch(f"/api/v1/policies/{policy['id']}", json={"enabled": False}, headers=admin_elsewhere),
        client.delete(f"/api/v1/policies/{policy['id']}", headers=admin_elsewhere),
    ):
        assert response.status_code == 404
    body = {"action": "execute", "resource": {"type": "agent"}, "request": {"prompt": "password"}}
    assert client.post("/api/v1/policies/evaluate", json=body, headers=other_org).json()["allowed"] is True
