"""The context graph's walks as recursive CTEs (SQLite and Postgres alike).

A walk is the rows (node, moves) reachable from its start: the start at 0, then each row's next node along an
edge of the organization (of the type, when given) in the walk's direction at moves + 1, while moves are below the
bound. The CTE is a UNION, not a UNION ALL: a row already found is not queued again, so a cycle or a self-loop
adds nothing once its nodes are found at a number of moves, and the bound ends the recursion. Each level holds
each node at most once: a walk reads at most `bound` times the edges of the nodes it reaches (never every simple
path, which grows exponentially). A node's distance is its least number of moves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.context_graph.tables import graph_edges, graph_nodes
from controlplane_domain.context_graph.entity import Direction


@dataclass(frozen=True, slots=True)
class Walk:
    """What a walk follows: the organization's edges (of `edge_type` when given) in `direction`."""

    organization_id: str
    direction: Direction
    edge_type: str | None

    def reversed(self) -> Walk:
        return Walk(self.organization_id, self.direction.reverse(), self.edge_type)

    def edge_conditions(self, edge: sa.FromClause) -> list[sa.ColumnElement[bool]]:
        conditions = [edge.c.organization_id == self.organization_id]
        if self.edge_type is not None:
            conditions.append(edge.c.type == self.edge_type)
        return conditions

    def moves(self, edge: sa.FromClause) -> list[tuple[sa.ColumnElement[str], sa.ColumnElement[str]]]:
        """The (from, to) columns of the edge's moves in the walk's direction (both of them for `both`)."""
        forward, backward = (edge.c.source_id, edge.c.target_id), (edge.c.target_id, edge.c.source_id)
        return {Direction.OUT: [forward], Direction.IN: [backward]}.get(self.direction, [forward, backward])


def distances(walk: Walk, start: str, bound: int, name: str) -> sa.Subquery:
    """(node_id, depth): each node at most `bound` moves from `start`, at its least number of moves."""
    anchor = sa.select(sa.literal(start, sa.String(64)).label("node_id"), sa.literal(0, sa.Integer()).label("depth"))
    rows = anchor.cte(f"{name}_walk", recursive=True)
    edge = graph_edges.alias(f"{name}_edge")
    next_id: sa.ColumnElement[str]
    if walk.direction is Direction.OUT:
        on, next_id = edge.c.source_id == rows.c.node_id, edge.c.target_id
    elif walk.direction is Direction.IN:
        on, next_id = edge.c.target_id == rows.c.node_id, edge.c.source_id
    else:
        on = sa.or_(edge.c.source_id == rows.c.node_id, edge.c.target_id == rows.c.node_id)
        next_id = sa.case((edge.c.source_id == rows.c.node_id, edge.c.target_id), else_=edge.c.source_id)
    step = (
        sa.select(next_id, rows.c.depth + 1)
        .select_from(rows.join(edge, on))
        .where(rows.c.depth < bound, *walk.edge_conditions(edge))
    )
    walked = rows.union(step)
    least = sa.func.min(walked.c.depth).label("depth")
    return sa.select(walked.c.node_id, least).group_by(walked.c.node_id).subquery(name)


def reached(walk: Walk, start: str, depth: int, limit: int) -> sa.Select[Any]:
    """The nodes within `depth` moves of `start` (not itself), with their distance, nearest first, then by
    (created_at, id); at most `limit`."""
    found = distances(walk, start, depth, "reached")
    nodes = graph_nodes
    return (
        sa.select(nodes, found.c.depth)
        .join(found, found.c.node_id == nodes.c.id)
        .where(nodes.c.organization_id == walk.organization_id, nodes.c.id != start)
        .order_by(found.c.depth, nodes.c.created_at, nodes.c.id)
        .limit(limit)
    )


def edges_among(walk: Walk, node_ids: Sequence[str], limit: int) -> sa.Select[Any]:
    """The walk's edges (of its type) between any two of `node_ids`, in (created_at, id) order; at most `limit`."""
    edges = graph_edges
    return (
        sa.select(edges)
        .where(
            *walk.edge_conditions(edges), edges.c.source_id.in_(list(node_ids)), edges.c.target_id.in_(list(node_ids))
        )
        .order_by(edges.c.created_at, edges.c.id)
        .limit(limit)
    )


def distance(walk: Walk, source_id: str, target_id: str, max_depth: int) -> sa.Select[Any]:
    """The least number of moves from source to target when at most `max_depth` (no row otherwise)."""
    found = distances(walk, source_id, max_depth, "ahead")
    return sa.select(found.c.depth).where(found.c.node_id == target_id)


def shortest_steps(walk: Walk, source_id: str, target_id: str, length: int) -> sa.Select[Any]:
    """(from_id, to_id, edge_id, at): every move on a path of `length` moves from source to target, the shortest
    (the move from a node `at` moves from the source to one `length - at - 1` moves before the target)."""
    ahead = distances(walk, source_id, length - 1, "ahead")
    behind = distances(walk.reversed(), target_id, length - 1, "behind")
    edge = graph_edges
    moves = [
        sa.select(from_id.label("from_id"), to_id.label("to_id"), edge.c.id.label("edge_id"), ahead.c.depth.label("at"))
        .select_from(edge.join(ahead, ahead.c.node_id == from_id).join(behind, behind.c.node_id == to_id))
        .where(*walk.edge_conditions(edge), ahead.c.depth + behind.c.depth == length - 1)
        for from_id, to_id in walk.moves(edge)
    ]
    return moves[0] if len(moves) == 1 else sa.union_all(*moves)  # type: ignore[return-value]
