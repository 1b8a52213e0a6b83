"""The context graph's walks as recursive CTEs (SQLite and Postgres alike).

A walk is the rows (node, moves) reachable from its start: the start at 0, then each row's next node along an
edge of the organization (of the type, when given) in the walk's direction at moves + 1, while moves are below the
bound. The CTE is a UNION, not a UNION ALL: a row already found is not queued again, so a cycle or a self-loop
adds nothing once its nodes are found at a number of moves, and the bound ends the recursion. Each level holds
each node at most once: a walk reads at most `bound` times the edges of the nodes it reaches (never every simple
path, which grows exponentially). A node's distance is its least number of moves.

A walk stops at `max_nodes` + 1 rows (a LIMIT over the CTE, which both databases evaluate only as far as it is
read): each answer carries `visited`, the rows read (at most `max_nodes` + 1), and the repository refuses a walk
that read more than `max_nodes` (entity.WalkTooLarge). Its memory is then bounded by `max_nodes` rows, and its
time by them and the edges of their nodes (and the statement timeout)."""

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
    dialect: str = "sqlite"

    def reversed(self) -> Walk:
        return Walk(self.organization_id, self.direction.reverse(), self.edge_type, self.dialect)

    def edge_conditions(self, edge: sa.FromClause) -> list[sa.ColumnElement[bool]]:
        """The edge is the organization's (and of the type). The organization's condition is an expression (`||
        ''`) that no index serves: the edges are read by their end (source_id or target_id), never along the
        organization's index, which reads every edge of the organization (SQLite prefers it for an order by
        (created_at, id), and Postgres, before its statistics know the table, for every move)."""
        conditions = [edge.c.organization_id.concat("") == self.organization_id]
        if self.edge_type is not None:
            conditions.append(edge.c.type == self.edge_type)
        return conditions

    def moves(self, edge: sa.FromClause) -> list[tuple[sa.ColumnElement[str], sa.ColumnElement[str]]]:
        """The (from, to) columns of the edge's moves in the walk's direction (both of them for `both`)."""
        forward, backward = (edge.c.source_id, edge.c.target_id), (edge.c.target_id, edge.c.source_id)
        return {Direction.OUT: [forward], Direction.IN: [backward]}.get(self.direction, [forward, backward])


def distances(walk: Walk, start: str, bound: int, name: str, max_nodes: int, *, ahead: sa.CTE | None = None) -> sa.CTE:
    """(node_id, depth, visited): each node at most `bound` moves from `start`, at its least number of moves, and
    the walk's rows read (`max_nodes` + 1 when it reached more than `max_nodes`: then some nodes are missing).

    `ahead`: a path's backward walk (from its target, `bound` = length - 1) moves only to nodes of the forward
    walk `ahead` that lie on a shortest path: at `bound` - moves from the source. Each node is then in at most one
    level: the backward walk reads no more rows than the forward walk's nodes, and the target."""
    anchor = sa.select(sa.literal(start, sa.String(64)).label("node_id"), sa.literal(0, sa.Integer()).label("depth"))
    rows = anchor.cte(f"{name}_walk", recursive=True)
    # each move is an index search on the edge's end (source_id or target_id): `both` is two searches, never an
    # OR in one join (which SQLite answers by scanning the organization's edges for each row of the walk)
    forward, backward = ("source_id", "target_id"), ("target_id", "source_id")
    ends = {Direction.OUT: [forward], Direction.IN: [backward]}.get(walk.direction, [forward, backward])
    searches = []
    for number, (near, far) in enumerate(ends):
        edge = graph_edges.alias(f"{name}_edge{number}")
        searches.append((edge, edge.c[far], [edge.c[near] == rows.c.node_id, *walk.edge_conditions(edge)]))

    def on_path(to_id: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
        assert ahead is not None
        return sa.and_(ahead.c.node_id == to_id, ahead.c.depth == bound - rows.c.depth)

    steps: list[sa.Select[Any]] = []
    if walk.dialect == "sqlite":  # (SQLite: a recursive CTE may have several recursive SELECTs)
        for edge, far_end, conditions in searches:
            joined = rows.join(edge, sa.and_(*conditions))
            joined = joined if ahead is None else joined.join(ahead, on_path(far_end))
            steps.append(sa.select(far_end, rows.c.depth + 1).select_from(joined).where(rows.c.depth < bound))
    else:  # Postgres names the CTE once in its recursive term: the searches as one LATERAL subquery
        moves = [sa.select(far.label("node_id")).where(*conditions).correlate(rows) for _, far, conditions in searches]
        # OFFSET 0 keeps the subquery one (Postgres pulls a plain one up into a join): an index search a row of
        # the walk. Pulled up, the planner takes the walk's level for a few rows and the organization's edges for
        # a few more (no statistics serve the `|| ''`), and loops over a scan of all of them for each row.
        moved = sa.union_all(*moves).subquery(f"{name}_moves")
        lateral = sa.select(moved.c.node_id).offset(0).lateral(f"{name}_move")
        joined = rows.join(lateral, sa.true())
        joined = joined if ahead is None else joined.join(ahead, on_path(lateral.c.node_id))
        steps.append(sa.select(lateral.c.node_id, rows.c.depth + 1).select_from(joined).where(rows.c.depth < bound))
    walked = rows.union(*steps)
    read = sa.select(walked.c.node_id, walked.c.depth).limit(max_nodes + 1).subquery(f"{name}_read")
    least = sa.func.min(read.c.depth).label("depth")
    visited = sa.cast(sa.func.sum(sa.func.count()).over(), sa.Integer()).label("visited")
    return sa.select(read.c.node_id, least, visited).group_by(read.c.node_id).cte(name)


def reached(walk: Walk, start: str, depth: int, limit: int, max_nodes: int) -> sa.Select[Any]:
    """The start (first: its distance is 0) and the nodes within `depth` moves of it, with their distance and the
    walk's `visited` (so that a walk past its bound shows, whatever it reached), nearest first, then by
    (created_at, id); at most `limit`."""
    found = distances(walk, start, depth, "reached", max_nodes)
    nodes = graph_nodes
    return (
        sa.select(nodes, found.c.depth, found.c.visited)
        .join(found, found.c.node_id == nodes.c.id)
        .where(nodes.c.organization_id == walk.organization_id)
        .order_by(found.c.depth, nodes.c.created_at, nodes.c.id)
        .limit(limit)
    )


def edges_among(walk: Walk, node_ids: Sequence[str], limit: int) -> sa.Select[Any]:
    """The walk's edges (of its type) between any two of `node_ids`, in (created_at, id) order; at most `limit`.

    Read by their ends (the edges of at most `limit` + 1 nodes: `edge_conditions`)."""
    edges = graph_edges
    conditions = walk.edge_conditions(edges)
    return (
        sa.select(edges)
        .where(*conditions, edges.c.source_id.in_(list(node_ids)), edges.c.target_id.in_(list(node_ids)))
        .order_by(edges.c.created_at, edges.c.id)
        .limit(limit)
    )


def distance(walk: Walk, source_id: str, target_id: str, max_depth: int, max_nodes: int) -> sa.Select[Any]:
    """One row: (depth, visited): the least number of moves from source to target when at most `max_depth` (else
    NULL), and the walk's rows read."""
    found = distances(walk, source_id, max_depth, "ahead", max_nodes)
    depth = sa.func.min(sa.case((found.c.node_id == target_id, found.c.depth), else_=None)).label("depth")
    return sa.select(depth, sa.func.max(found.c.visited).label("visited"))


def shortest_steps(walk: Walk, source_id: str, target_id: str, length: int, max_nodes: int) -> sa.Select[Any]:
    """(from_id, to_id, edge_id, at): every move on a path of `length` moves from source to target, the shortest
    (the move from a node `at` moves from the source to one `length - at - 1` moves before the target). The
    forward walk is part of the one `distance` read (within `max_nodes`); the backward walk moves only through its
    nodes that lie on a shortest path, each once (`distances`): it reads at most `max_nodes` + 1 rows too."""
    ahead = distances(walk, source_id, length - 1, "ahead", max_nodes)
    behind = distances(walk.reversed(), target_id, length - 1, "behind", max_nodes, ahead=ahead)
    edge = graph_edges
    moves = [
        sa.select(from_id.label("from_id"), to_id.label("to_id"), edge.c.id.label("edge_id"), ahead.c.depth.label("at"))
        .select_from(edge.join(ahead, ahead.c.node_id == from_id).join(behind, behind.c.node_id == to_id))
        .where(*walk.edge_conditions(edge), ahead.c.depth + behind.c.depth == length - 1)
        for from_id, to_id in walk.moves(edge)
    ]
    return moves[0] if len(moves) == 1 else sa.union_all(*moves)  # type: ignore[return-value]
