"""Context management over HTTP, on every store: an owner's context (put, get, delete, bounds, roles, other
organizations), and the context an execution was created with (layers, merge rules, frozen at creation)."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import assert_validation, create_agent
from tests.http.test_executions import execute, setup_queue
from tests.http.test_projects import create_project, create_team
from tests.support import bearer, make_jwt

CONTEXT_FIELDS = {
    "organization_id", "owner_type", "owner_id", "instructions", "knowledge", "variables", "storage_paths",
    "created_at", "updated_at",
}  # fmt: skip
EXECUTION_CONTEXT_FIELDS = {"execution_id", "instructions", "knowledge", "variables", "storage_paths", "sources"}
FULL = {
    "instructions": "Be brief.",
    "knowledge": [{"name": "runbook", "text": "Restart it."}, {"name": "wiki", "uri": "https://wiki.example/ops"}],
    "variables": {"REGION": "eu", "tier": "gold"},
    "storage_paths": ["reports/", "shared/data.csv"],
}


def put_context(client: TestClient[Any], url: str, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    response = client.put(f"{url}/context", json=body, **kwargs)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def owners(client: TestClient[Any]) -> dict[str, str]:
    """One owner of each kind: its URL by owner type."""
    environment_id, _ = setup_queue(client, "owners")
    return {
        "project": f"/api/v1/projects/{create_project(client)['id']}",
        "environment": f"/api/v1/environments/{environment_id}",
        "team": f"/api/v1/teams/{create_team(client)['id']}",
        "agent": f"/api/v1/agents/{create_agent(client)['id']}",
    }


def test_put_get_and_delete_on_every_kind_of_owner(client: TestClient[Any]) -> None:
    for owner_type, url in owners(client).items():
        none = client.get(f"{url}/context")
        assert none.status_code == 404, none.text  # no context yet (tests/security/test_context_delete.py)
        assert none.json()["error"]["details"] == {"resource": "context", "id": url.rsplit("/", 1)[1]}
        stored = put_context(client, url, FULL)
        assert set(stored) == CONTEXT_FIELDS
        assert {key: stored[key] for key in FULL} == FULL
        assert (stored["owner_type"], stored["owner_id"]) == (owner_type, url.rsplit("/", 1)[1])
        assert stored["organization_id"] == "default"
        assert stored["created_at"] is not None
        assert client.get(f"{url}/context").json() == stored
        replaced = put_context(client, url, {"variables": {"ONLY": "this"}})
        assert (replaced["instructions"], replaced["knowledge"], replaced["storage_paths"]) == ("", [], [])
        assert replaced["variables"] == {"ONLY": "this"}
        assert replaced["created_at"] == stored["created_at"]
        assert client.delete(f"{url}/context").status_code == 204
        assert client.get(f"{url}/context").status_code == 404
        assert client.delete(f"{url}/context").status_code == 204


def test_bad_contexts_are_422_naming_the_field(client: TestClient[Any]) -> None:
    url = f"/api/v1/agents/{create_agent(client)['id']}/context"
    both = {"knowledge": [{"name": "k", "text": "t", "uri": "https://x.example"}]}
    assert_validation(client.put(url, json=both), ["body", "knowledge", 0])
    assert_validation(client.put(url, json={"knowledge": [{"name": "k"}]}), ["body", "knowledge", 0])
    twice = {"knowledge": [{"name": "k", "text": "a"}, {"name": "k", "text": "b"}]}
    assert_validation(client.put(url, json=twice), ["body", "knowledge", 1, "name"])
    assert_validation(client.put(url, json={"knowledge": [{"name": "k", "uri": "no scheme"}]}),
                      ["body", "knowledge", 0, "uri"])  # fmt: skip
    assert_validation(client.put(url, json={"instructions": "x" * 65_537}), ["body", "instructions"])
    assert_validation(client.put(url, json={"knowledge": [{"name": "k", "text": "x" * 262_145}]}),
                      ["body", "knowledge", 0, "text"])  # fmt: skip
    many = {"knowledge": [{"name": f"k{i}", "text": "t"} for i in range(101)]}
    assert_validation(client.put(url, json=many), ["body", "knowledge"])
    assert client.put(url, json={"variables": {"1BAD": "v"}}).status_code == 422
    assert client.put(url, json={"variables": {f"V{i}": "v" for i in range(201)}}).status_code == 422
    assert client.put(url, json={"variables": {"V": 3}}).status_code == 422
    assert_validation(client.put(url, json={"storage_paths": ["a/../b"]}), ["body", "storage_paths", 0])
    assert_validation(client.put(url, json={"storage_paths": ["a", "a"]}), ["body", "storage_paths", 1])
    assert client.put(url, json={"storage_paths": [""]}).status_code == 422
    assert client.put(url, json={"instructions": "x", "owner_id": "mine"}).status_code == 422
    assert client.get(url).status_code == 404  # nothing was stored


def test_unknown_owner_is_404(client: TestClient[Any]) -> None:
    missing = "00000000-0000-0000-0000-000000000000"
    for kind in ("projects", "environments", "teams", "agents"):
        for method in ("GET", "PUT", "DELETE"):
            body = {"instructions": "x"} if method == "PUT" else None
            response = client.request(method, f"/api/v1/{kind}/{missing}/context", json=body)
            assert response.status_code == 404, (kind, method, response.text)
            assert response.json()["error"]["code"] == "NOT_FOUND"
    assert client.get(f"/api/v1/executions/{missing}/context").status_code == 404


def test_another_organizations_owner_is_404_and_untouched(client: TestClient[Any]) -> None:
    urls = owners(client)
    for url in urls.values():
        put_context(client, url, {"instructions": "secret"})
    intruder = bearer(make_jwt("org-other", roles=["admin"]))
    for url in urls.values():
        assert client.get(f"{url}/context", headers=intruder).status_code == 404
        assert client.put(f"{url}/context", json={"instructions": "mine"}, headers=intruder).status_code == 404
        assert client.delete(f"{url}/context", headers=intruder).status_code == 404
        assert client.get(f"{url}/context").json()["instructions"] == "secret"


def test_viewers_read_and_members_write(client: TestClient[Any]) -> None:
    url = f"/api/v1/agents/{create_agent(client)['id']}"
    put_context(client, url, {"instructions": "keep"})
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.get(f"{url}/context", headers=viewer).json()["instructions"] == "keep"
    denied = client.put(f"{url}/context", json={"instructions": "no"}, headers=viewer)
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "FORBIDDEN"
    assert client.delete(f"{url}/context", headers=viewer).status_code == 403
    member = bearer(make_jwt("default", roles=["member"]))
    assert put_context(client, url, {"instructions": "changed"}, headers=member)["instructions"] == "changed"


def test_an_execution_without_any_context_has_the_empty_one(client: TestClient[Any]) -> None:
    _, queue_id = setup_queue(client)
    execution = execute(client, create_agent(client)["id"], queue_id)
    response = client.get(f"/api/v1/executions/{execution['id']}/context")
    assert response.status_code == 200, response.text
    assert response.json() == {
        "execution_id": execution["id"], "instructions": "", "knowledge": [], "variables": {}, "storage_paths": [],
        "sources": [],
    }  # fmt: skip


def test_layers_merge_in_order_and_the_result_is_frozen_at_creation(
    client: TestClient[Any], clock: ManualClock
) -> None:
    environment_id, queue_id = setup_queue(client)
    team, agent = create_team(client), create_agent(client, "member")
    assert client.post(f"/api/v1/teams/{team['id']}/agents/{agent['id']}").status_code == 200
    # the project holding the team joined first; the one holding the agent joined later, and overrides it
    first, second = create_project(client, "Early", "EARLY"), create_project(client, "Late", "LATE")
    client.post(f"/api/v1/projects/{first['id']}/teams/{team['id']}")
    clock.advance(1)
    client.post(f"/api/v1/projects/{second['id']}/agents/{agent['id']}")
    layers = {
        f"/api/v1/projects/{first['id']}": {
            "instructions": "first project", "variables": {"A": "first", "B": "first"},
            "knowledge": [{"name": "guide", "text": "first"}, {"name": "faq", "text": "first"}],
            "storage_paths": ["shared/"],
        },
        f"/api/v1/projects/{second['id']}": {"variables": {"B": "second", "C": "second"}},
        f"/api/v1/environments/{environment_id}": {"instructions": "environment", "storage_paths": ["env/", "shared/"]},
        f"/api/v1/teams/{team['id']}": {"knowledge": [{"name": "guide", "uri": "https://team.example/guide"}]},
        f"/api/v1/agents/{agent['id']}": {"instructions": "agent", "variables": {"C": "agent"}},
    }  # fmt: skip
    for url, body in layers.items():
        put_context(client, url, body)
    execution = execute(client, agent["id"], queue_id)
    resolved = client.get(f"/api/v1/executions/{execution['id']}/context").json()
    assert set(resolved) == EXECUTION_CONTEXT_FIELDS
    assert resolved["instructions"] == "first project\n\nenvironment\n\nagent"
    assert resolved["variables"] == {"A": "first", "B": "second", "C": "agent"}
    assert resolved["knowledge"] == [{"name": "guide", "uri": "https://team.example/guide"},
                                     {"name": "faq", "text": "first"}]  # fmt: skip
    assert resolved["storage_paths"] == ["shared/", "env/"]
    assert resolved["sources"] == [
        {"owner_type": "project", "owner_id": first["id"]}, {"owner_type": "project", "owner_id": second["id"]},
        {"owner_type": "environment", "owner_id": environment_id}, {"owner_type": "team", "owner_id": team["id"]},
        {"owner_type": "agent", "owner_id": agent["id"]},
    ]  # fmt: skip
    for url in layers:  # later edits change new executions only
        put_context(client, url, {"instructions": "changed"})
    client.delete(f"/api/v1/agents/{agent['id']}/context")
    assert client.get(f"/api/v1/executions/{execution['id']}/context").json() == resolved
    later = client.get(f"/api/v1/executions/{execute(client, agent['id'], queue_id)['id']}/context").json()
    assert later["instructions"] == "\n\n".join(["changed"] * 4)
    assert later["variables"] == {}


def test_a_team_execution_takes_the_team_its_projects_and_the_environment(client: TestClient[Any]) -> None:
    environment_id, queue_id = setup_queue(client)
    team, project = create_team(client), create_project(client)
    client.post(f"/api/v1/projects/{project['id']}/teams/{team['id']}")
    put_context(client, f"/api/v1/projects/{project['id']}", {"variables": {"P": "1", "X": "project"}})
    put_context(client, f"/api/v1/environments/{environment_id}", {"variables": {"E": "1", "X": "environment"}})
    put_context(client, f"/api/v1/teams/{team['id']}", {"variables": {"T": "1", "X": "team"}})
    response = client.post(f"/api/v1/teams/{team['id']}/execute", json={"prompt": "go", "worker_queue_id": queue_id})
    assert response.status_code == 201, response.text
    resolved = client.get(f"/api/v1/executions/{response.json()['id']}/context").json()
    assert resolved["variables"] == {"P": "1", "X": "team", "E": "1", "T": "1"}
    assert [source["owner_type"] for source in resolved["sources"]] == ["project", "environment", "team"]


def test_a_deleted_owner_takes_its_context_with_it(client: TestClient[Any]) -> None:
    _, queue_id = setup_queue(client)
    agent, other = create_agent(client, "gone"), create_agent(client, "kept")
    put_context(client, f"/api/v1/agents/{agent['id']}", {"instructions": "old"})
    before = execute(client, agent["id"], queue_id)
    assert client.delete(f"/api/v1/agents/{agent['id']}").status_code == 204
    assert client.get(f"/api/v1/agents/{agent['id']}/context").status_code == 404
    assert client.get(f"/api/v1/executions/{before['id']}/context").json()["instructions"] == "old"
    assert client.get(f"/api/v1/agents/{other['id']}/context").json()["error"]["details"]["resource"] == "context"


def test_another_organizations_execution_context_is_404(client: TestClient[Any]) -> None:
    _, queue_id = setup_queue(client)
    agent = create_agent(client)
    put_context(client, f"/api/v1/agents/{agent['id']}", {"instructions": "secret"})
    execution = execute(client, agent["id"], queue_id)
    intruder = bearer(make_jwt("org-other", roles=["admin"]))
    response = client.get(f"/api/v1/executions/{execution['id']}/context", headers=intruder)
    assert response.status_code == 404
    assert "secret" not in response.text
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert (
        client.get(f"/api/v1/executions/{execution['id']}/context", headers=viewer).json()["instructions"] == "secret"
    )
