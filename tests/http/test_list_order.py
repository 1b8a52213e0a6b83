"""Every list's `order` over (created_at, id), stable across pages, and its default, on every store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_domain.paging import MAX_QUERY_LENGTH
from tests.http.test_agents import create_agent
from tests.http.test_executions import execute, setup_queue
from tests.http.test_jobs import create_job
from tests.http.test_projects import create_project
from tests.http.test_skills import create_skill
from tests.http.test_teams import create_team
from tests.http.test_templates import create_template
from tests.http.test_workflows import create_workflow, step


def walk(client: TestClient[Any], path: str, query: str = "", limit: int = 2) -> list[str]:
    """Every id of a list, page by page (`limit` a page), checking each page's total and window."""
    ids: list[str] = []
    separator = "&" if "?" in path else "?"
    while True:
        response = client.get(f"{path}{separator}limit={limit}&offset={len(ids)}{query}")
        assert response.status_code == 200, response.text
        body = response.json()
        assert (body["limit"], body["offset"]) == (limit, len(ids))
        ids.extend(item["id"] for item in body["items"])
        if not body["items"]:
            assert body["total"] == len(ids)
            return ids


def oldest_first(objects: list[tuple[int, str]]) -> list[str]:
    """Ids in (created_at, id) order, given (when, id) pairs."""
    return [object_id for _, object_id in sorted(objects)]


def test_executions_list_newest_first_by_default_and_pages_both_ways(
    client: TestClient[Any], clock: ManualClock
) -> None:
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    made = [(0, execute(client, agent["id"], queue_id)["id"]) for _ in range(5)]  # one created_at: ids break ties
    clock.advance(1)
    made += [(1, execute(client, agent["id"], queue_id)["id"]) for _ in range(2)]
    expected = oldest_first(made)
    assert walk(client, "/api/v1/executions") == expected[::-1]
    assert walk(client, "/api/v1/executions", "&order=desc") == expected[::-1]
    assert walk(client, "/api/v1/executions", "&order=asc", limit=3) == expected
    newest = client.get("/api/v1/executions?limit=1").json()
    assert (newest["items"][0]["id"], newest["total"]) == (expected[-1], 7)
    filtered = walk(client, f"/api/v1/executions?agent_id={agent['id']}", "&order=asc")
    assert filtered == expected


def test_an_unknown_order_names_the_allowed_ones(client: TestClient[Any]) -> None:
    response = client.get("/api/v1/executions?order=newest")
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == ["query", "order"]
    assert response.json()["error"]["details"]["allowed"] == ["asc", "desc"]
    unknown = client.get("/api/v1/executions?sort=desc")
    assert unknown.status_code == 422, unknown.text
    assert "order" in unknown.json()["error"]["details"]["known"]


NAMES = ["Alpha", "alpha_beta", "ALPHA%", "beta\\gamma", "Équipe", "équipe", "zeta"]


def _named(client: TestClient[Any], area: str) -> Callable[[str, int], str]:
    """How to make one named object of `area` (its id), given its name and a serial number."""
    if area == "agents":
        return lambda name, i: create_agent(client, name)["id"]
    if area == "teams":
        return lambda name, i: create_team(client, name)["id"]
    if area == "projects":
        return lambda name, i: create_project(client, name, f"K{i}")["id"]
    if area == "skills":
        return lambda name, i: create_skill(client, name)["id"]
    if area == "templates":
        return lambda name, i: create_template(client, name)["id"]
    agent = create_agent(client, "the-agent")
    if area == "workflows":
        return lambda name, i: create_workflow(client, [step("only", agent["id"])], name)["id"]
    _, queue_id = setup_queue(client, "the-queue")
    return lambda name, i: create_job(client, name, target={"agent_id": agent["id"]}, worker_queue_id=queue_id)["id"]


NAMED_AREAS = ["agents", "teams", "workflows", "jobs", "projects", "skills", "templates"]


@pytest.mark.parametrize("area", NAMED_AREAS)
def test_named_lists_take_name_q_and_order(client: TestClient[Any], clock: ManualClock, area: str) -> None:
    make = _named(client, area)
    made: dict[str, str] = {}
    when: list[tuple[int, str]] = []
    for i, name in enumerate(NAMES):
        if i == 4:  # two instants: the first four share one created_at, ids break their ties
            clock.advance(1)
        made[name] = make(name, i)
        when.append((i >= 4, made[name]))
    path = f"/api/v1/{area}" + ("?scope=organization" if area == "templates" else "")
    expected = oldest_first([(int(later), object_id) for later, object_id in when])
    assert walk(client, path) == expected  # the default: oldest first
    assert walk(client, path, "&order=asc", limit=3) == expected
    assert walk(client, path, "&order=desc") == expected[::-1]

    def names(query: dict[str, str], order: str = "asc") -> list[str]:
        response = client.get(f"/api/v1/{area}", params={**query, "order": order, "limit": 200})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["total"] == len(body["items"])
        return [item["name"] for item in body["items"]]

    assert names({"name": "Alpha"}) == ["Alpha"]  # exact, case included
    assert names({"name": "alpha"}) == []
    assert sorted(names({"q": "alpha"})) == sorted(["Alpha", "alpha_beta", "ALPHA%"])  # ASCII in any case
    assert names({"q": "a_b"}) == ["alpha_beta"]  # `_` is a plain character, not any one character
    assert names({"q": "_"}) == ["alpha_beta"]
    assert names({"q": "%"}) == ["ALPHA%"]  # `%` likewise
    assert names({"q": "\\"}) == ["beta\\gamma"]  # and the escape character itself
    assert names({"q": "a%b"}) == []
    assert sorted(names({"q": "quipe"})) == sorted(["Équipe", "équipe"])
    assert names({"q": "ÉQUIPE"}) == ["Équipe"]  # other letters exactly as given, on every store
    assert names({"q": "é"}) == ["équipe"]
    both = [made["Équipe"], made["équipe"]]
    ids = client.get(f"/api/v1/{area}", params={"q": "QUIPE", "order": "desc"}).json()["items"]
    assert [item["id"] for item in ids] == sorted(both, reverse=True)  # one created_at: by id, descending
    assert names({"q": "alpha", "name": "ALPHA%"}) == ["ALPHA%"]  # both apply
    paged = client.get(f"/api/v1/{area}", params={"q": "ALPHA", "limit": 2, "offset": 1}).json()
    alphas = [object_id for object_id in expected if object_id in {made[n] for n in ("Alpha", "alpha_beta", "ALPHA%")}]
    assert (paged["total"], [item["id"] for item in paged["items"]]) == (3, alphas[1:])


def test_templates_filter_and_order_the_built_in_ones_with_the_organizations(client: TestClient[Any]) -> None:
    made = {name: create_template(client, name)["id"] for name in ("agent-a", "agent-b")}
    mine = sorted(made.values())  # one created_at: by id
    builtins = [t["id"] for t in client.get("/api/v1/templates", params={"scope": "builtin"}).json()["items"]]
    agents = [
        t["id"] for t in client.get("/api/v1/templates", params={"scope": "builtin", "q": "-AGENT"}).json()["items"]
    ]
    assert 0 < len(agents) < len(builtins)
    assert walk(client, "/api/v1/templates?q=agent") == agents + mine  # the built-in ones first, as shipped
    assert walk(client, "/api/v1/templates?q=agent", "&order=desc", limit=3) == (agents + mine)[::-1]
    assert walk(client, "/api/v1/templates?name=agent-b") == [made["agent-b"]]


@pytest.mark.parametrize("parameter", ["q", "name"])
def test_a_name_query_is_bounded(client: TestClient[Any], parameter: str) -> None:
    assert client.get("/api/v1/agents", params={parameter: "x" * MAX_QUERY_LENGTH}).status_code == 200
    response = client.get("/api/v1/agents", params={parameter: "x" * (MAX_QUERY_LENGTH + 1)})
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == ["query", parameter]
    unknown = client.get("/api/v1/environments", params={"q": "x"})  # a list without names does not take it
    assert unknown.status_code == 422
    assert "order" in unknown.json()["error"]["details"]["known"]


def _posted(client: TestClient[Any], path: str, body: dict[str, Any], status: int = 201) -> str:
    response = client.post(path, json=body)
    assert response.status_code == status, response.text
    object_id: str = response.json()["id"]
    return object_id


def _lists(client: TestClient[Any], which: str) -> tuple[str, Callable[[int], str]]:
    """A list's path and how to add one item to it (its id in the list), given a serial number."""
    if which == "environments":
        return "/api/v1/environments", lambda i: _posted(client, "/api/v1/environments", {"name": f"env-{i}"})
    if which == "secrets":
        return "/api/v1/secrets", lambda i: _posted(client, "/api/v1/secrets", {"name": f"KEY_{i}", "value": "v"})
    if which == "nodes":
        return "/api/v1/context-graph/nodes", lambda i: _posted(client, "/api/v1/context-graph/nodes", {})
    if which == "models":
        return "/api/v1/models", lambda i: _posted(client, "/api/v1/models", {"value": f"m-{i}", "provider": "p"})
    if which == "audit":  # the events of environments' creations

        def made(i: int) -> str:
            environment = _posted(client, "/api/v1/environments", {"name": f"env-{i}"})
            found = client.get("/api/v1/audit-events", params={"resource_id": environment}).json()["items"]
            event_id: str = found[0]["id"]
            return event_id

        return "/api/v1/audit-events?resource_type=environment", made
    agent = create_agent(client, "the-agent")
    _, queue_id = setup_queue(client, "the-queue")
    if which == "task-plans":
        return "/api/v1/task-plans", lambda i: _posted(client, "/api/v1/task-plans", {
            "task": f"task {i}", "worker_queue_id": queue_id})  # fmt: skip
    if which == "workflow-runs":
        workflow = create_workflow(client, [step("only", agent["id"])], "flow")
        runs = f"/api/v1/workflows/{workflow['id']}/runs"
        return "/api/v1/workflow-runs", lambda i: _posted(client, runs, {"worker_queue_id": queue_id, "input": {}})
    job = create_job(client, "job", target={"agent_id": agent["id"]}, worker_queue_id=queue_id)
    return f"/api/v1/jobs/{job['id']}/runs", lambda i: _posted(client, f"/api/v1/jobs/{job['id']}/trigger", {})


@pytest.mark.parametrize(
    ("which", "newest_first"),
    [("environments", False), ("secrets", False), ("nodes", False), ("models", False), ("audit", True),
     ("task-plans", True), ("workflow-runs", True), ("job-runs", True)],
)  # fmt: skip
def test_lists_page_both_ways_and_histories_start_with_the_newest(
    client: TestClient[Any], clock: ManualClock, which: str, newest_first: bool
) -> None:
    path, make = _lists(client, which)
    clock.advance(1)  # after what the setup made
    made = [(0, make(i)) for i in range(4)]
    clock.advance(1)
    made += [(1, make(i)) for i in range(4, 6)]
    expected = oldest_first(made)
    assert walk(client, path) == (expected[::-1] if newest_first else expected)
    assert walk(client, path, "&order=asc", limit=4) == expected
    assert walk(client, path, "&order=desc", limit=3) == expected[::-1]


def test_deliveries_list_newest_first_by_default(client: TestClient[Any], clock: ManualClock) -> None:
    hook = _posted(client, "/api/v1/webhooks", {"url": "https://93.184.215.14/hook", "events": ["*"]})
    made = [(0, _posted(client, f"/api/v1/webhooks/{hook}/test", {}, 202)) for _ in range(3)]
    clock.advance(1)
    made += [(1, _posted(client, f"/api/v1/webhooks/{hook}/test", {}, 202)) for _ in range(2)]
    expected = oldest_first(made)  # one event each: (created_at, position, id) is (created_at, id) here
    path = f"/api/v1/webhooks/{hook}/deliveries"
    assert walk(client, path) == expected[::-1]
    assert walk(client, path, "&order=asc") == expected


def test_attached_skills_list_in_the_order_attached_either_way(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    skills = [create_skill(client, f"skill-{i}")["id"] for i in range(3)]
    for skill_id in skills:
        attached = client.post(f"/api/v1/agents/{agent['id']}/skills/{skill_id}", json={})
        assert attached.status_code == 200, attached.text
    path = f"/api/v1/agents/{agent['id']}/skills"
    listed = [item["skill"]["id"] for item in client.get(path).json()["items"]]
    assert listed == skills
    newest = client.get(path, params={"order": "desc", "limit": 2}).json()
    assert ([item["skill"]["id"] for item in newest["items"]], newest["total"]) == (skills[:0:-1], 3)
