"""The context graph over HTTP, on every store: nodes and edges, their bounds (422), filters, neighbours and
shortest paths, and another organization's nodes (404, never revealed)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import assert_validation
from tests.support import BEFORE_THE_STORE, bearer, make_jwt

GRAPH = "/api/v1/context-graph"
OTHER = bearer(make_jwt("org-graph-other", sub="intruder"))
VIEWER = bearer(make_jwt("default", roles=["viewer"]))


def create_node(client: TestClient[Any], *labels: str, headers: dict[str, str] | None = None, **properties: Any) -> str:
    response = client.post(f"{GRAPH}/nodes", json={"labels": list(labels), "properties": properties}, headers=headers)
    assert response.status_code == 201, response.text
    node_id: str = response.json()["id"]
    return node_id


def create_edge(client: TestClient[Any], source: str, target: str, type: str = "rel") -> str:
    response = client.post(f"{GRAPH}/edges", json={"type": type, "source_id": source, "target_id": target})
    assert response.status_code == 201, response.text
    edge_id: str = response.json()["id"]
    return edge_id


def test_a_node_is_created_read_changed_and_deleted_with_its_edges(client: TestClient[Any]) -> None:
    created = client.post(f"{GRAPH}/nodes", json={"labels": ["Doc"], "properties": {"title": "t", "n": [1]}})
    assert created.status_code == 201, created.text
    node = created.json()
    assert {k: node[k] for k in ("organization_id", "labels", "properties")} == {
        "organization_id": "default", "labels": ["Doc"], "properties": {"title": "t", "n": [1]}}  # fmt: skip
    assert client.get(f"{GRAPH}/nodes/{node['id']}").json() == node
    assert client.get(f"{GRAPH}/nodes/{node['id'].upper()}").json() == node  # server-made ids are caseless
    changed = client.patch(f"{GRAPH}/nodes/{node['id']}", json={"labels": ["Doc", "Spec"]})
    assert changed.status_code == 200, changed.text
    assert changed.json()["labels"] == ["Doc", "Spec"]
    assert changed.json()["properties"] == node["properties"]
    other = create_node(client)
    out, back, loop = create_edge(client, node["id"], other), create_edge(client, other, node["id"]), create_edge(
        client, node["id"], node["id"])  # fmt: skip
    kept = create_edge(client, other, other)
    assert client.delete(f"{GRAPH}/nodes/{node['id']}").status_code == 204
    assert client.get(f"{GRAPH}/nodes/{node['id']}").status_code == 404
    for gone in (out, back, loop):
        assert client.get(f"{GRAPH}/edges/{gone}").status_code == 404
    assert [edge["id"] for edge in client.get(f"{GRAPH}/edges").json()["items"]] == [kept]
    assert client.delete(f"{GRAPH}/nodes/{node['id']}").status_code == 404


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"labels": ["a"] * 33}, ["body", "labels"]),
        ({"labels": ["-leading-dash"]}, ["body", "labels", 0]),
        ({"labels": ["x" * 65]}, ["body", "labels", 0]),
        ({"labels": ["same", "same"]}, ["body", "labels"]),
        ({"properties": {"big": "x" * 16 * 1024}}, ["body", "properties"]),
        ({"properties": []}, ["body", "properties"]),
        ({"id": "mine"}, ["body", "id"]),
    ],
)
@BEFORE_THE_STORE
def test_node_bounds_are_422(client: TestClient[Any], body: dict[str, Any], loc: list[Any]) -> None:
    assert_validation(client.post(f"{GRAPH}/nodes", json=body), loc)
    node = create_node(client)
    assert_validation(client.patch(f"{GRAPH}/nodes/{node}", json=body), loc)


def test_an_edge_joins_two_nodes_of_the_organization_only(client: TestClient[Any]) -> None:
    mine, theirs = create_node(client), create_node(client, headers=OTHER)
    for body, loc in (
        ({"type": "rel", "source_id": mine, "target_id": theirs}, ["body", "target_id"]),
        ({"type": "rel", "source_id": theirs, "target_id": mine}, ["body", "source_id"]),
        ({"type": "rel", "source_id": "nope", "target_id": mine}, ["body", "source_id"]),
        ({"type": "bad type", "source_id": mine, "target_id": mine}, ["body", "type"]),
        ({"type": "rel", "source_id": mine}, ["body", "target_id"]),
    ):
        response = client.post(f"{GRAPH}/edges", json=body)
        assert_validation(response, loc)
    unknown = client.post(f"{GRAPH}/edges", json={"type": "rel", "source_id": "nope", "target_id": mine}).json()
    foreign = client.post(f"{GRAPH}/edges", json={"type": "rel", "source_id": theirs, "target_id": mine}).json()
    assert foreign["error"]["message"] == unknown["error"]["message"].replace("nope", theirs)  # no hint it exists
    edge = client.post(f"{GRAPH}/edges", json={"type": "owns", "source_id": mine, "target_id": mine,
                                               "properties": {"since": 2024}})  # fmt: skip
    assert edge.status_code == 201, edge.text
    assert {k: edge.json()[k] for k in ("type", "source_id", "target_id", "properties")} == {
        "type": "owns", "source_id": mine, "target_id": mine, "properties": {"since": 2024}}  # fmt: skip
    assert client.get(f"{GRAPH}/edges/{edge.json()['id']}").json() == edge.json()


def test_lists_filter_nodes_by_label_and_property_and_edges_by_ends_and_type(
    client: TestClient[Any], clock: ManualClock
) -> None:
    a = create_node(client, "Doc", "Team", version=3, name="alpha", flag=True)
    clock.advance(1)
    b = create_node(client, "Doc", version="3", name="beta", gone=None)
    clock.advance(1)
    c = create_node(client, "Team", version=3.5, nested={"version": 3})
    create_node(client, "Doc", headers=OTHER, version=3)

    def names(query: str) -> list[str]:
        response = client.get(f"{GRAPH}/nodes?{query}")
        assert response.status_code == 200, response.text
        assert response.json()["total"] == len(response.json()["items"])
        return [item["id"] for item in response.json()["items"]]

    assert names("") == [a, b, c]
    assert names("label=Doc") == [a, b]
    assert names("label=Doc&label=Team") == [a]
    assert names("property.version=3") == [a, b]
    assert names("property.version=3.5&label=Team") == [c]
    assert names("property.name=alpha&property.version=3") == [a]
    assert names("property.flag=true") == [a]
    assert names("property.gone=null") == [b]
    assert names("property.nested=%7B%22version%22%3A3%7D") == []  # objects never match
    paged = client.get(f"{GRAPH}/nodes?property.version=3&limit=1&offset=1").json()
    assert ([item["id"] for item in paged["items"]], paged["total"]) == ([b], 2)
    assert_validation(client.get(f"{GRAPH}/nodes?property.=x"), ["query", "property."])
    too_many = "&".join(f"property.k{n}=v" for n in range(17))
    assert_validation(client.get(f"{GRAPH}/nodes?{too_many}"), ["query", "property"])
    assert_validation(client.get(f"{GRAPH}/nodes?properties.version=3"), ["query", "properties.version"])
    assert_validation(client.get(f"{GRAPH}/nodes?label=no%20spaces"), ["query", "label"])
    ab = create_edge(client, a, b)
    clock.advance(1)
    ac = create_edge(client, a, c, "owns")
    clock.advance(1)
    bc = create_edge(client, b, c)

    def edges(query: str) -> list[str]:
        response = client.get(f"{GRAPH}/edges?{query}")
        assert response.status_code == 200, response.text
        return [item["id"] for item in response.json()["items"]]

    assert edges("") == [ab, ac, bc]
    assert edges("type=rel") == [ab, bc]
    assert edges(f"source_id={a}") == [ab, ac]
    assert edges(f"target_id={c}&type=owns") == [ac]
    assert edges("limit=1&offset=2") == [bc]
    assert client.get(f"{GRAPH}/edges", headers=OTHER).json()["total"] == 0


def chain(client: TestClient[Any], clock: ManualClock) -> list[str]:
    """a -> b -> c -> a (a cycle) and c -> d, each of type rel; d -> d (self-loop); created in that order."""
    nodes = []
    for name in "abcd":
        nodes.append(create_node(client, name=name))
        clock.advance(1)
    a, b, c, d = nodes
    for source, target in ((a, b), (b, c), (c, a), (c, d), (d, d)):
        create_edge(client, source, target)
    return nodes


def test_neighbors_within_the_depth_and_the_limit(client: TestClient[Any], clock: ManualClock) -> None:
    a, b, c, d = chain(client, clock)
    found = client.get(f"{GRAPH}/nodes/{a}/neighbors?depth=3&direction=out")
    assert found.status_code == 200, found.text
    body = found.json()
    assert [(node["properties"]["name"], node["depth"]) for node in body["nodes"]] == [("b", 1), ("c", 2), ("d", 3)]
    assert len(body["edges"]) == 5
    assert body["truncated"] is False
    assert {k: body[k] for k in ("node_id", "depth", "direction", "edge_type", "limit")} == {
        "node_id": a, "depth": 3, "direction": "out", "edge_type": None, "limit": 100}  # fmt: skip
    both = client.get(f"{GRAPH}/nodes/{a}/neighbors").json()  # depth 1, both ways
    assert [node["id"] for node in both["nodes"]] == [b, c]
    cut = client.get(f"{GRAPH}/nodes/{a}/neighbors?depth=3&direction=out&limit=1").json()
    assert ([node["id"] for node in cut["nodes"]], cut["truncated"]) == ([b], True)
    assert client.get(f"{GRAPH}/nodes/{d}/neighbors?edge_type=none").json()["nodes"] == []
    bad = ["depth=0", "depth=4", "limit=0", "limit=1001", "direction=up", "edge_type=a%20b", "hops=2"]
    for query in bad:
        loc = query.split("=")[0]
        assert_validation(client.get(f"{GRAPH}/nodes/{a}/neighbors?{query}"), ["query", loc])


def test_shortest_paths_and_their_absence(client: TestClient[Any], clock: ManualClock) -> None:
    a, b, c, d = chain(client, clock)
    found = client.get(f"{GRAPH}/paths", params={"source_id": a, "target_id": d})
    assert found.status_code == 200, found.text
    body = found.json()
    assert (body["found"], body["length"], [node["id"] for node in body["nodes"]]) == (True, 3, [a, b, c, d])
    assert [(edge["source_id"], edge["target_id"]) for edge in body["edges"]] == [(a, b), (b, c), (c, d)]
    short = client.get(f"{GRAPH}/paths", params={"source_id": a, "target_id": d, "max_depth": 2}).json()
    assert (short["found"], short["length"], short["nodes"], short["edges"]) == (False, None, [], [])
    back = client.get(f"{GRAPH}/paths", params={"source_id": d, "target_id": a, "direction": "both"}).json()
    assert [node["id"] for node in back["nodes"]] == [d, c, a]
    itself = client.get(f"{GRAPH}/paths", params={"source_id": b, "target_id": b}).json()
    assert (itself["found"], itself["length"], [node["id"] for node in itself["nodes"]]) == (True, 0, [b])
    for params, loc in (({"max_depth": 7}, "max_depth"), ({"max_depth": 0}, "max_depth"), ({"hops": 1}, "hops"),
                        ({"direction": "up"}, "direction")):  # fmt: skip
        query = {"source_id": a, "target_id": d, **params}
        assert_validation(client.get(f"{GRAPH}/paths", params=query), ["query", loc])
    missing = client.get(f"{GRAPH}/paths", params={"source_id": a})
    assert missing.status_code == 422
    assert "target_id" in missing.json()["error"]["message"]


def test_another_organizations_nodes_are_404(client: TestClient[Any], clock: ManualClock) -> None:
    a, b, _, _ = chain(client, clock)
    for path in (f"nodes/{a}", f"nodes/{a}/neighbors"):
        response = client.get(f"{GRAPH}/{path}", headers=OTHER)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"
    theirs = create_node(client, headers=OTHER)
    for source, target in ((a, theirs), (theirs, a)):
        response = client.get(f"{GRAPH}/paths", params={"source_id": source, "target_id": target})
        assert response.status_code == 404, response.text
    response = client.get(f"{GRAPH}/paths", params={"source_id": a, "target_id": b}, headers=OTHER)
    assert response.status_code == 404, response.text
    assert client.get(f"{GRAPH}/nodes", headers=OTHER).json()["items"][0]["id"] == theirs


def test_viewers_read_and_members_write(client: TestClient[Any]) -> None:
    node = create_node(client)
    assert client.get(f"{GRAPH}/nodes/{node}/neighbors", headers=VIEWER).status_code == 200
    assert client.post(f"{GRAPH}/nodes", json={}, headers=VIEWER).status_code == 403
    assert client.delete(f"{GRAPH}/nodes/{node}", headers=VIEWER).status_code == 403


def test_the_document_tags_every_operation_context_graph(client: TestClient[Any]) -> None:
    document = client.get("/api/openapi.json").json()
    operations = [op for path, item in document["paths"].items() if path.startswith(GRAPH) for op in item.values()]
    assert len(operations) == 11
    assert all(op["tags"] == ["context-graph"] and op["operationId"] for op in operations)
    listed = document["paths"][f"{GRAPH}/nodes"]["get"]
    assert "property.KEY=VALUE" in listed["description"]


@pytest.mark.parametrize(
    "value", ["1e999999", "-1e-999999", "9" * 5000, "1" + "0" * 70, "0e-99999", "NaN", "Infinity", "1.", "\u00e9"]
)
def test_property_values_far_out_of_range_compare_as_strings(client: TestClient[Any], value: str) -> None:
    number = create_node(client, v=0)
    text = create_node(client, v=value)
    response = client.get(f"{GRAPH}/nodes", params={"property.v": value})
    assert response.status_code == 200, response.text
    expected = [number, text] if value == "0e-99999" else [text]
    assert sorted(item["id"] for item in response.json()["items"]) == sorted(expected)
