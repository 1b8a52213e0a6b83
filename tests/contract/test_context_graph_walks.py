"""The walks of every store against brute force on random small graphs (cycles, self-loops, parallel edges, two
edge types): neighbours at their least distance and the edges among them, and the shortest path every store
answers (of least length, then of least edge ids in order); and the visited-node bound: a walk that reaches more
nodes than it may, counted level by level, is refused on every store alike."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controlplane_domain.context_graph.entity import Direction, GraphEdge, GraphNode, WalkTooLarge
from controlplane_domain.context_graph.traversal import choose_path
from tests.contract.conftest import UowFactory

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
Move = tuple[int, int, int]  # (from node, to node, edge index)


@st.composite
def graphs(draw: st.DrawFn) -> tuple[int, list[tuple[int, int, str, int]]]:
    """(how many nodes, edges as (source, target, type, created second)): ties in created_at are frequent."""
    size = draw(st.integers(min_value=1, max_value=6))
    node = st.integers(min_value=0, max_value=size - 1)
    edge = st.tuples(node, node, st.sampled_from(["a", "b"]), st.integers(min_value=0, max_value=2))
    return size, draw(st.lists(edge, max_size=14))


def moves(edges: list[tuple[int, int, str, int]], direction: Direction, edge_type: str | None) -> list[Move]:
    found = []
    for index, (source, target, kind, _) in enumerate(edges):
        if edge_type in (None, kind):
            if direction in (Direction.OUT, Direction.BOTH):
                found.append((source, target, index))
            if direction in (Direction.IN, Direction.BOTH):
                found.append((target, source, index))
    return found


def least_moves(start: int, walk: list[Move], bound: int) -> dict[int, int]:
    """Relax every move `bound` times (Bellman-Ford): each node's least number of moves, when at most `bound`."""
    found = {start: 0}
    for _ in range(bound):
        for source, target, _ in walk:
            if source in found and found[source] + 1 < found.get(target, bound + 1):
                found[target] = found[source] + 1
    return found


def visited(start: int, walk: list[Move], bound: int) -> int:
    """The nodes a walk of `bound` moves reaches, level by level: the start, then each level's nodes (the nodes one
    move from the level before: a node may be in several levels)."""
    level, count = {start}, 1
    for _ in range(bound):
        level = {target for source, target, _ in walk if source in level}
        count += len(level)
    return count


def least_path(source: int, target: int, walk: list[Move], length: int) -> list[int] | None:
    """Of every walk of `length` moves from source to target, the edge indexes of the least in order (depth first,
    the edges tried in id order: the first found is the least)."""
    if length == 0:
        return [] if source == target else None
    for start, end, index in sorted(walk, key=lambda move: move[2]):
        if start == source:
            rest = least_path(end, target, walk, length - 1)
            if rest is not None:
                return [index, *rest]
    return None


async def store(uow: UowFactory, org: str, size: int, edges: list[tuple[int, int, str, int]]) -> None:
    async with uow() as work:
        for n in range(size):
            at = T0 + timedelta(seconds=n % 2)
            node = GraphNode(id=f"{org}-n{n}", organization_id=org, labels=(), properties={}, created_at=at,
                             updated_at=at)  # fmt: skip
            await work.context_graph.add(node)
        for index, (source, target, kind, second) in enumerate(edges):
            at = T0 + timedelta(seconds=second)
            await work.context_graph.add_edge(GraphEdge(
                id=f"{org}-e{index:02d}", organization_id=org, type=kind, source_id=f"{org}-n{source}",
                target_id=f"{org}-n{target}", properties={}, created_at=at, updated_at=at))  # fmt: skip
        await work.commit()


def number(object_id: str) -> int:
    return int(object_id.rsplit("-", 1)[1][1:])


directions = st.sampled_from(list(Direction))
edge_types = st.sampled_from([None, "a", "b"])
HYPOTHESIS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@HYPOTHESIS
@given(graph=graphs(), data=st.data(), direction=directions, edge_type=edge_types)
async def test_shortest_paths_are_what_brute_force_finds(
    uow: UowFactory, graph: tuple[int, list[tuple[int, int, str, int]]], data: st.DataObject, direction: Direction,
    edge_type: str | None,
) -> None:  # fmt: skip
    size, edges = graph
    org = f"org-{uuid.uuid4().hex}"
    await store(uow, org, size, edges)
    source, target = data.draw(st.integers(0, size - 1)), data.draw(st.integers(0, size - 1))
    max_depth = data.draw(st.integers(1, 2) | st.integers(1, 6))  # often shorter than a path
    max_nodes = data.draw(st.integers(1, 12) | st.just(5_000))
    walk = moves(edges, direction, edge_type)
    length = least_moves(source, walk, max_depth).get(target)
    arguments: dict[str, Any] = {"max_depth": max_depth, "direction": direction, "edge_type": edge_type}
    async with uow() as work:
        if visited(source, walk, max_depth) > max_nodes:
            with pytest.raises(WalkTooLarge):
                await work.context_graph.path_steps(
                    org, f"{org}-n{source}", f"{org}-n{target}", max_nodes=max_nodes, **arguments
                )
            return
        steps = await work.context_graph.path_steps(
            org, f"{org}-n{source}", f"{org}-n{target}", max_nodes=max_nodes, **arguments
        )
    if length is None:
        assert steps is None
        return
    assert steps is not None
    path = choose_path(f"{org}-n{source}", f"{org}-n{target}", steps)
    assert [number(step.edge_id) for step in path] == least_path(source, target, walk, length)
    assert [(number(step.from_id), number(step.to_id)) for step in path] == [
        next((start, end) for start, end, index in walk if index == number(step.edge_id) and start == number(
            step.from_id)) for step in path]  # fmt: skip


@HYPOTHESIS
@given(graph=graphs(), data=st.data(), direction=directions, edge_type=edge_types)
async def test_neighbors_are_what_brute_force_finds(
    uow: UowFactory, graph: tuple[int, list[tuple[int, int, str, int]]], data: st.DataObject, direction: Direction,
    edge_type: str | None,
) -> None:  # fmt: skip
    size, edges = graph
    org = f"org-{uuid.uuid4().hex}"
    await store(uow, org, size, edges)
    start, depth, limit = (
        data.draw(st.integers(0, size - 1)),
        data.draw(st.integers(1, 3)),
        data.draw(st.integers(1, 8)),
    )
    max_nodes = data.draw(st.integers(1, 12) | st.just(5_000))
    reach = least_moves(start, moves(edges, direction, edge_type), depth)
    # nodes are created at second n % 2: ordered by distance, then created_at, then id
    expected: list[Any] = sorted(((d, n % 2, f"n{n}") for n, d in reach.items() if n != start))
    kept = {start, *(int(name[1:]) for _, _, name in expected[:limit])}
    among = sorted((second, f"e{index:02d}") for index, (source, target, kind, second) in enumerate(edges)
                   if edge_type in (None, kind) and source in kept and target in kept)  # fmt: skip
    arguments: dict[str, Any] = {"depth": depth, "direction": direction, "edge_type": edge_type, "limit": limit}
    async with uow() as work:
        if visited(start, moves(edges, direction, edge_type), depth) > max_nodes:
            with pytest.raises(WalkTooLarge):
                await work.context_graph.neighbors(org, f"{org}-n{start}", max_nodes=max_nodes, **arguments)
            return
        found = await work.context_graph.neighbors(org, f"{org}-n{start}", max_nodes=max_nodes, **arguments)
    assert [(item.node.id.rsplit("-", 1)[1], item.depth) for item in found.nodes] == [
        (name, d) for d, _, name in expected[:limit]]  # fmt: skip
    assert [item.id.rsplit("-", 1)[1] for item in found.edges] == [name for _, name in among[:limit]]
    assert found.truncated == (len(expected) > limit or len(among) > limit)
