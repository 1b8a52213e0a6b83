"""What the context graph needs from a store: its nodes and edges, and the walks computed where they are kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from controlplane_domain.context_graph.entity import (
    Direction,
    GraphEdge,
    GraphNode,
    Neighborhood,
    PropertyFilter,
    Step,
)
from controlplane_domain.paging import PageRequest
from controlplane_domain.repository import Repository


class ContextGraphRepository(Repository[GraphNode], Protocol):
    async def delete(self, organization_id: str, node_id: str) -> None:
        """Delete the node and every edge from or to it."""

    async def list_page(
        self,
        organization_id: str,
        page: PageRequest,
        *,
        labels: Sequence[str] = (),
        properties: Sequence[PropertyFilter] = (),
    ) -> tuple[list[GraphNode], int]:
        """The nodes holding every one of `labels` and matching every one of `properties`, (created_at, id) order."""

    async def nodes(self, organization_id: str, node_ids: Sequence[str]) -> dict[str, GraphNode]:
        """The organization's nodes among `node_ids`, by id."""

    async def add_edge(self, edge: GraphEdge) -> None:
        """Store a new edge (its nodes were checked); Conflict when one was deleted meanwhile."""

    async def get_edge(self, organization_id: str, edge_id: str) -> GraphEdge | None: ...

    async def delete_edge(self, organization_id: str, edge_id: str) -> None: ...

    async def edges(self, organization_id: str, edge_ids: Sequence[str]) -> dict[str, GraphEdge]:
        """The organization's edges among `edge_ids`, by id."""

    async def edge_page(
        self,
        organization_id: str,
        page: PageRequest,
        *,
        type: str | None,
        source_id: str | None,
        target_id: str | None,
    ) -> tuple[list[GraphEdge], int]:
        """The edges of that type, from that source, to that target (each when given), (created_at, id) order."""

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
        """The nodes reachable from the node in 1 to `depth` moves along edges of `edge_type` (any when None) in
        `direction`, each at its least distance, ordered by (distance, created_at, id), at most `limit`; the edges
        of that type between any two of them and the start node, (created_at, id) order, at most `limit`.
        WalkTooLarge when the walk reaches more than `max_nodes` nodes (entity.MAX_WALK_NODES: counted level by
        level, the start included): it stops there."""

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
        """Every step lying on a shortest path from source to target of at most `max_depth` moves (empty when they
        are the same node); None when no path is that short. WalkTooLarge when the walk from the source (of
        `max_depth` moves) reaches more than `max_nodes` nodes, as `neighbors`."""
