"""Every list's `order` over (created_at, id), stable across pages, and its default, on every store."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import create_agent
from tests.http.test_executions import execute, setup_queue


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
