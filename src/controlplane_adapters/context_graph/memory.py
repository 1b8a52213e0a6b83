"""The context graph in the memory store: nodes and edges, and the walks as breadth-first searches."""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence

from controlplane_adapters.memory.base import MemoryRepository, sorted_page
from controlplane_domain.audit import audited_writes
from controlplane_domain.context_graph.entity import (
    Direction,
    GraphEdge,
    GraphNode,
    Neighborhood,
    PropertyFilter,
    Reached,
    Step,
    WalkTooLarge,
)
from controlplane_domain.errors import Conflict
from controlplane_domain.paging import PageRequest

Moves = dict[str, list[tuple[str, str]]]
"""node id -> the (next node id, edge id) a walk may move to."""


def moves(edges: Iterable[GraphEdge], direction: Direction) -> Moves:
    """Where a walk in `direction` may go from each node, along `edges`."""
    found: Moves = {}
    for edge in edges:
        if direction in (Direction.OUT, Direction.BOTH):
            found.setdefault(edge.source_id, []).append((edge.target_id, edge.id))
        if direction in (Direction.IN, Direction.BOTH):
            found.setdefault(edge.target_id, []).append((edge.source_id, edge.id))
    return found


def distances(
    start: str, graph: Moves, max_depth: int, max_nodes: int | None = None, *, within: Container[str] | None = None
) -> dict[str, int]:
    """Each node at most `max_depth` moves from `start`, and its least number of moves. Level by level, as the SQL
    stores' walks (walks.py): a level is the nodes one move from the level before (a node may be in several
    levels; cycles and self-loops end with the levels), and the walk counts every level's nodes. WalkTooLarge
    when the count passes `max_nodes`. `within`: the walk moves only to those nodes."""
    found = {start: 0}
    level = {start}
    visited = 1
    for depth in range(1, max_depth + 1):
        level = {next_id for node in level for next_id, _ in graph.get(node, ()) if within is None or next_id in within}
        visited += len(level)
        if max_nodes is not None and visited > max_nodes:
            raise WalkTooLarge
        if not level:
            break
        for node in level:
            found.setdefault(node, depth)
    return found


class MemoryContextGraphRepository(MemoryRepository[GraphNode]):
    noun = "node"
    audited = GraphNode.audited

    def __init__(self, rows: dict[str, GraphNode], edge_rows: dict[str, GraphEdge]) -> None:
        super().__init__(rows)
        self.edge_rows = edge_rows

    def _check_unique(self, obj: GraphNode) -> None:
        """Nodes have no unique field."""

    def _edges_of(self, organization_id: str, edge_type: str | None = None) -> list[GraphEdge]:
        return [
            edge
            for edge in self.edge_rows.values()
            if edge.organization_id == organization_id and edge_type in (None, edge.type)
        ]

    async def delete(self, organization_id: str, object_id: str) -> None:
        if await self.get(organization_id, object_id) is not None:
            await super().delete(organization_id, object_id)  # the row, and its audit event
            for edge in self._edges_of(organization_id):
                if object_id in (edge.source_id, edge.target_id):
                    del self.edge_rows[edge.id]

    async def list_page(
        self,
        organization_id: str,
        page: PageRequest,
        *,
        labels: Sequence[str] = (),
        properties: Sequence[PropertyFilter] = (),
    ) -> tuple[list[GraphNode], int]:
        def keep(node: GraphNode) -> bool:
            return set(labels) <= set(node.labels) and all(wanted.matches(node.properties) for wanted in properties)

        return self.page_where(organization_id, page, keep)

    async def nodes(self, organization_id: str, node_ids: Sequence[str]) -> dict[str, GraphNode]:
        found = (self.rows.get(node_id) for node_id in node_ids)
        return {node.id: node for node in found if node is not None and node.organization_id == organization_id}

    async def add_edge(self, edge: GraphEdge) -> None:
        if edge.source_id not in self.rows or edge.target_id not in self.rows:  # as the SQL stores' foreign keys
            raise Conflict("edge refers to a node that no longer exists")
        self.edge_rows[edge.id] = edge
        self._audit(audited_writes.created(GraphEdge.audited, edge))

    async def get_edge(self, organization_id: str, edge_id: str) -> GraphEdge | None:
        edge = self.edge_rows.get(edge_id)
        return edge if edge is not None and edge.organization_id == organization_id else None

    async def delete_edge(self, organization_id: str, edge_id: str) -> None:
        if await self.get_edge(organization_id, edge_id) is not None:
            del self.edge_rows[edge_id]
            self._audit(audited_writes.deleted(GraphEdge.audited, organization_id, edge_id))

    async def edges(self, organization_id: str, edge_ids: Sequence[str]) -> dict[str, GraphEdge]:
        found = (self.edge_rows.get(edge_id) for edge_id in edge_ids)
        return {edge.id: edge for edge in found if edge is not None and edge.organization_id == organization_id}

    async def edge_page(
        self,
        organization_id: str,
        page: PageRequest,
        *,
        type: str | None,
        source_id: str | None,
        target_id: str | None,
    ) -> tuple[list[GraphEdge], int]:
        kept = (
            edge
            for edge in self._edges_of(organization_id, type)
            if source_id in (None, edge.source_id) and target_id in (None, edge.target_id)
        )
        return sorted_page(kept, lambda edge: (edge.created_at, edge.id), page)

    async def neighbors(
        self,
        organization_id: str,
        node_id: str,
        *,
        depth: int,
        direction: Direction,
        edge_type: str | None,
        limit: int,
        max_nodes: int,
    ) -> Neighborhood:
        edges = self._edges_of(organization_id, edge_type)
        reached = [
            Reached(self.rows[found], distance)
            for found, distance in distances(node_id, moves(edges, direction), depth, max_nodes).items()
            if found != node_id
        ]
        reached.sort(key=lambda item: (item.depth, item.node.created_at, item.node.id))
        kept = {node_id, *(item.node.id for item in reached[:limit])}
        among = sorted(
            (edge for edge in edges if edge.source_id in kept and edge.target_id in kept),
            key=lambda edge: (edge.created_at, edge.id),
        )
        return Neighborhood(reached[:limit], among[:limit], len(reached) > limit or len(among) > limit)

    async def path_steps(
        self,
        organization_id: str,
        source_id: str,
        target_id: str,
        *,
        max_depth: int,
        direction: Direction,
        edge_type: str | None,
        max_nodes: int,
    ) -> list[Step] | None:
        edges = self._edges_of(organization_id, edge_type)
        forward = moves(edges, direction)
        ahead = distances(source_id, forward, max_depth, max_nodes)
        if target_id not in ahead:
            return None
        length = ahead[target_id]
        behind = distances(target_id, moves(edges, direction.reverse()), length, within=ahead)
        return [
            Step(node, next_id, edge_id, ahead[node])
            for node, options in forward.items()
            if node in ahead
            for next_id, edge_id in options
            if next_id in behind and ahead[node] + 1 + behind[next_id] == length
        ]
