"""Context graph repository contract on every store: nodes and edges, their filters, and the walks (neighbours,
shortest paths) through cycles, self-loops, directions, edge types and bounds."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from controlplane_domain.context_graph.entity import Direction, GraphEdge, GraphNode, PropertyFilter
from controlplane_domain.context_graph.traversal import choose_path
from controlplane_domain.errors import Conflict
from controlplane_domain.paging import PageRequest
from tests.contract.conftest import UowFactory

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
ORG = "org-a"


def node(name: str, *labels: str, org: str = ORG, at: int = 0, **properties: Any) -> GraphNode:
    return GraphNode(
        id=f"{org}-n-{name}",
        organization_id=org,
        labels=labels,
        properties=properties,
        created_at=T0 + timedelta(seconds=at),
        updated_at=T0 + timedelta(seconds=at),
    )


def edge(source: str, target: str, type: str = "rel", *, name: str = "", org: str = ORG, at: int = 0) -> GraphEdge:
    return GraphEdge(
        id=f"{org}-e-{name or source + target + type}",
        organization_id=org,
        type=type,
        source_id=f"{org}-n-{source}",
        target_id=f"{org}-n-{target}",
        properties={"w": 1},
        created_at=T0 + timedelta(seconds=at),
        updated_at=T0 + timedelta(seconds=at),
    )


async def store(uow: UowFactory, nodes: list[GraphNode], edges: list[GraphEdge]) -> None:
    async with uow() as work:
        for item in nodes:
            await work.context_graph.add(item)
        for link in edges:
            await work.context_graph.add_edge(link)
        await work.commit()


def ids(items: list[Any]) -> list[str]:
    return [item.id.split("-", 3)[-1] for item in items]


async def test_nodes_and_edges_round_trip_and_are_scoped(uow: UowFactory) -> None:
    a, b = node("a", "Doc", "Team", x={"deep": [1]}), node("b")
    link = edge("a", "b")
    await store(uow, [a, b, node("c", org="org-b")], [link])
    async with uow() as work:
        graph = work.context_graph
        assert await graph.get(ORG, a.id) == a
        assert await graph.get("org-b", a.id) is None
        assert await graph.get_edge(ORG, link.id) == link
        assert await graph.get_edge("org-b", link.id) is None
        assert await graph.nodes(ORG, [a.id, "org-b-n-c", "nope"]) == {a.id: a}
        assert await graph.edges("org-b", [link.id]) == {}
        await graph.delete("org-b", a.id)
        await graph.delete_edge("org-b", link.id)
        await work.commit()
    changed = replace(a, labels=("Other",), properties={}, updated_at=T0 + timedelta(hours=1))
    async with uow() as work:
        assert await work.context_graph.get_edge(ORG, link.id) == link
        await work.context_graph.update(changed)
        await work.commit()
    async with uow() as work:
        assert await work.context_graph.get(ORG, a.id, for_update=True) == changed


async def test_deleting_a_node_deletes_its_edges_and_only_them(uow: UowFactory) -> None:
    nodes = [node(name, at=n) for n, name in enumerate("abc")]
    edges = [edge("a", "b", at=0), edge("b", "a", at=1), edge("b", "b", at=2), edge("a", "c", at=3)]
    await store(uow, nodes, edges)
    async with uow() as work:
        await work.context_graph.delete(ORG, f"{ORG}-n-b")
        await work.commit()
    async with uow() as work:
        left, total = await work.context_graph.edge_page(ORG, PageRequest(), type=None, source_id=None, target_id=None)
        assert (ids(left), total) == (["acrel"], 1)
        assert await work.context_graph.get(ORG, f"{ORG}-n-b") is None


async def test_an_edge_to_a_node_deleted_meanwhile_is_a_conflict(uow: UowFactory) -> None:
    await store(uow, [node("a")], [])
    with pytest.raises(Conflict):
        async with uow() as work:
            await work.context_graph.add_edge(edge("a", "gone"))
    async with uow() as work:
        assert await work.context_graph.get_edge(ORG, edge("a", "gone").id) is None


async def test_nodes_filter_by_labels_and_properties(uow: UowFactory) -> None:
    nodes = [
        node("s", "Doc", "Team", at=0, v="3", **{"a.b": "x y"}),
        node("i", "Doc", at=1, v=3),
        node("f", "Team", at=2, v=3.0),
        node("r", at=3, v=2.5),
        node("t", "Doc", at=4, v=True),
        node("z", at=5, v=None),
        node("o", at=6, v={"x": 3}),
        node("l", at=7, v=[3]),
        node("other", "Doc", org="org-b", v=3),
    ]
    await store(uow, nodes, [])

    async def names(*labels: str, **wanted: str) -> list[str]:
        filters = [PropertyFilter(key, value) for key, value in wanted.items()]
        async with uow() as work:
            found, total = await work.context_graph.list_page(ORG, PageRequest(), labels=labels, properties=filters)
        assert total == len(found)
        return ids(found)

    assert await names() == ["s", "i", "f", "r", "t", "z", "o", "l"]
    assert await names("Doc") == ["s", "i", "t"]
    assert await names("Doc", "Team") == ["s"]
    assert await names("Nope") == []
    assert await names(v="3") == ["s", "i", "f"]  # the string "3", and the numbers 3 and 3.0
    assert await names(v="3.0") == ["i", "f"]
    assert await names(v="3e0") == ["i", "f"]
    assert await names(v="2.5") == ["r"]
    assert await names(v="true") == ["t"]
    assert await names(v="false") == []
    assert await names(v="null") == ["z"]
    assert await names(v='{"x": 3}') == []  # objects and arrays never match
    assert await names(v="03") == []
    assert await names(**{"a.b": "x y", "v": "3"}) == ["s"]  # a key with a dot is one top-level key
    assert await names("Team", v="3") == ["s", "f"]
    assert await names(missing="3") == []
    async with uow() as work:
        page, total = await work.context_graph.list_page(
            ORG, PageRequest(limit=1, offset=1), labels=("Doc",), properties=()
        )
    assert (ids(page), total) == (["i"], 3)


async def test_edges_filter_by_type_source_and_target(uow: UowFactory) -> None:
    await store(
        uow,
        [node(name) for name in "abc"] + [node("a", org="org-b"), node("b", org="org-b")],
        [edge("a", "b", at=0), edge("a", "c", "owns", at=1), edge("b", "c", at=2), edge("a", "b", org="org-b")],
    )

    async def names(**where: str | None) -> list[str]:
        arguments: dict[str, Any] = {"type": None, "source_id": None, "target_id": None, **where}
        async with uow() as work:
            found, total = await work.context_graph.edge_page(ORG, PageRequest(), **arguments)
        assert total == len(found)
        return ids(found)

    assert await names() == ["abrel", "acowns", "bcrel"]
    assert await names(type="rel") == ["abrel", "bcrel"]
    assert await names(source_id=f"{ORG}-n-a") == ["abrel", "acowns"]
    assert await names(target_id=f"{ORG}-n-c", type="rel") == ["bcrel"]
    assert await names(source_id="org-b-n-a") == []


# a -> b -> c -> a (a cycle), c -> d, d -> d (a self-loop), b -> e (of type "other"), f alone
CYCLE = (
    [node(name, at=n) for n, name in enumerate("abcdef")],
    [edge("a", "b", at=0), edge("b", "c", at=1), edge("c", "a", at=2), edge("c", "d", at=3), edge("d", "d", at=4),
     edge("b", "e", "other", at=5)],
)  # fmt: skip


async def neighbors(uow: UowFactory, start: str, **options: Any) -> tuple[list[tuple[str, int]], list[str], bool]:
    arguments: dict[str, Any] = {
        "depth": 1, "direction": Direction.OUT, "edge_type": None, "limit": 100, "max_nodes": 10_000, **options
    }  # fmt: skip
    async with uow() as work:
        found = await work.context_graph.neighbors(ORG, f"{ORG}-n-{start}", **arguments)
    return [(ids([item.node])[0], item.depth) for item in found.nodes], ids(found.edges), found.truncated


async def test_neighbors_walk_cycles_and_self_loops_once(uow: UowFactory) -> None:
    await store(uow, *CYCLE)
    assert await neighbors(uow, "a") == ([("b", 1)], ["abrel"], False)
    assert await neighbors(uow, "a", depth=3) == (
        [("b", 1), ("c", 2), ("e", 2), ("d", 3)],
        ["abrel", "bcrel", "carel", "cdrel", "ddrel", "beother"],
        False,
    )
    assert await neighbors(uow, "d", depth=3) == ([], ["ddrel"], False)  # only its self-loop
    assert await neighbors(uow, "f", depth=3, direction=Direction.BOTH) == ([], [], False)


async def test_neighbors_follow_the_direction_and_the_edge_type(uow: UowFactory) -> None:
    await store(uow, *CYCLE)
    assert await neighbors(uow, "a", direction=Direction.IN) == ([("c", 1)], ["carel"], False)
    both = ([("b", 1), ("c", 1)], ["abrel", "bcrel", "carel"], False)
    assert await neighbors(uow, "a", direction=Direction.BOTH) == both
    into = ([("c", 1), ("b", 2)], ["bcrel", "cdrel", "ddrel"], False)
    assert await neighbors(uow, "d", depth=2, direction=Direction.IN) == into
    assert await neighbors(uow, "a", depth=3, edge_type="rel") == (
        [("b", 1), ("c", 2), ("d", 3)],
        ["abrel", "bcrel", "carel", "cdrel", "ddrel"],
        False,
    )
    assert await neighbors(uow, "b", edge_type="other", direction=Direction.BOTH) == ([("e", 1)], ["beother"], False)
    assert await neighbors(uow, "a", depth=3, edge_type="none") == ([], [], False)


async def test_neighbors_are_cut_at_the_limit_and_say_so(uow: UowFactory) -> None:
    await store(uow, *CYCLE)
    assert await neighbors(uow, "a", depth=3, limit=2) == ([("b", 1), ("c", 2)], ["abrel", "bcrel"], True)
    # 4 nodes fit, but not their 6 edges
    assert await neighbors(uow, "a", depth=3, limit=4) == (
        [("b", 1), ("c", 2), ("e", 2), ("d", 3)],
        ["abrel", "bcrel", "carel", "cdrel"],
        True,
    )
    assert (await neighbors(uow, "a", depth=3, limit=6))[2] is False


async def test_neighbors_never_cross_organizations(uow: UowFactory) -> None:
    nodes, edges = CYCLE
    await store(uow, nodes, edges)
    await store(uow, [node("x", org="org-b")], [])
    async with uow() as work:  # an edge row of another organization naming our nodes is not followed
        await work.context_graph.add_edge(replace(edge("a", "f"), id="stray", organization_id="org-b"))
        await work.commit()
    both = ([("b", 1), ("c", 1)], ["abrel", "bcrel", "carel"], False)
    assert await neighbors(uow, "a", direction=Direction.BOTH) == both


async def path(uow: UowFactory, source: str, target: str, **options: Any) -> list[str] | None:
    arguments: dict[str, Any] = {
        "max_depth": 6, "direction": Direction.OUT, "edge_type": None, "max_nodes": 10_000, **options
    }  # fmt: skip
    source_id, target_id = f"{ORG}-n-{source}", f"{ORG}-n-{target}"
    async with uow() as work:
        steps = await work.context_graph.path_steps(ORG, source_id, target_id, **arguments)
    if steps is None:
        return None
    return [step.edge_id.split("-", 3)[-1] for step in choose_path(source_id, target_id, steps)]


async def test_shortest_paths_through_cycles_directions_and_types(uow: UowFactory) -> None:
    await store(uow, *CYCLE)
    assert await path(uow, "a", "d") == ["abrel", "bcrel", "cdrel"]
    assert await path(uow, "a", "d", max_depth=2) is None
    assert await path(uow, "a", "d", max_depth=3) == ["abrel", "bcrel", "cdrel"]
    assert await path(uow, "d", "a") is None
    assert await path(uow, "d", "a", direction=Direction.IN) == ["cdrel", "bcrel", "abrel"]
    assert await path(uow, "d", "a", direction=Direction.BOTH) == ["cdrel", "carel"]
    assert await path(uow, "a", "e", edge_type="rel") is None
    assert await path(uow, "a", "e") == ["abrel", "beother"]
    assert await path(uow, "d", "d") == []
    assert await path(uow, "a", "f", direction=Direction.BOTH) is None


async def test_of_several_shortest_paths_every_store_answers_the_same(uow: UowFactory) -> None:
    # a -> b -> d and a -> c -> d, twice over (two parallel edges a -> c); e: a longer way
    nodes = [node(name, at=n) for n, name in enumerate("abcde")]
    edges = [edge("a", "c", name="2"), edge("a", "c", name="1"), edge("a", "b", name="3"), edge("c", "d", name="5"),
             edge("b", "d", name="4"), edge("a", "e", name="0"), edge("e", "b", name="6")]  # fmt: skip
    await store(uow, nodes, edges)
    assert await path(uow, "a", "d") == ["1", "5"]
    assert await path(uow, "d", "a", direction=Direction.BOTH) == ["4", "3"]
