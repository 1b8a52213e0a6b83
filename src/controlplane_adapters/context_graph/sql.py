"""The context graph in SQL: the row mapping of nodes and edges (tables.py), the filters of a list of nodes, and
the repository (the walks' statements are in walks.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from controlplane_adapters.context_graph import walks
from controlplane_adapters.context_graph.tables import graph_edges, graph_nodes
from controlplane_adapters.sql.base import SqlConnection, SqlRepository
from controlplane_adapters.sql.errors import OverBudget
from controlplane_adapters.sql.rows import RowMapping
from controlplane_domain.context_graph.entity import (
    MAX_WALK_MS,
    MAX_WALK_MS_OFF_LOOP,
    Direction,
    GraphEdge,
    GraphNode,
    Neighborhood,
    PropertyFilter,
    Reached,
    Step,
    WalkTooLarge,
    WalkTooLong,
)
from controlplane_domain.errors import Conflict, DomainError
from controlplane_domain.paging import PageRequest

NODE_ROWS = RowMapping(GraphNode, graph_nodes)
EDGE_ROWS = RowMapping(GraphEdge, graph_edges)


def _labels_held(dialect: str, labels: Sequence[str]) -> sa.ColumnElement[bool]:
    """The node holds every one of `labels`: JSON containment on Postgres (the GIN index), json_each on SQLite."""
    if dialect == "postgresql":
        return sa.type_coerce(graph_nodes.c.labels, JSONB).contains(list(labels))
    held = []
    for label in labels:
        each = sa.func.json_each(graph_nodes.c.labels).table_valued("value")
        held.append(sa.exists().select_from(each).where(each.c.value == label))
    return sa.and_(*held)


def _property_matches(dialect: str, wanted: PropertyFilter) -> sa.ColumnElement[bool]:
    """The node's top-level property is a JSON scalar whose string form is the value (entity.PropertyFilter)."""
    number, word = wanted.number, wanted.word
    if dialect == "postgresql":
        value = sa.type_coerce(graph_nodes.c.properties, JSONB)[wanted.key]
        kind = sa.func.jsonb_typeof(value)
        either = [sa.and_(kind == "string", value.astext == wanted.value)]
        if number is not None:
            numeric = sa.case((kind == "number", sa.cast(value.astext, sa.Numeric())), else_=None)
            either.append(numeric == wanted.exact)
        if word == "null":
            either.append(kind == "null")
        elif word is not None:
            either.append(sa.and_(kind == "boolean", value.astext == word))
        return sa.or_(*either)
    each = sa.func.json_each(graph_nodes.c.properties).table_valued("key", "value", "type")
    either = [sa.and_(each.c.type == "text", each.c.value == wanted.value)]
    if number is not None:
        bound = number if isinstance(number, float) or -(2**63) <= number < 2**63 else float(number)
        either.append(sa.and_(each.c.type.in_(("integer", "real")), each.c.value == bound))
    if word is not None:
        either.append(each.c.type == word)
    return sa.exists().select_from(each).where(each.c.key == wanted.key, sa.or_(*either))


class SqlEdges(SqlRepository[GraphEdge]):
    """The edges table, by id (what `SqlContextGraphRepository` delegates its edges' reads and writes to)."""

    table = graph_edges
    rows = EDGE_ROWS
    noun = "edge"
    audited = GraphEdge.audited
    unique_field = "id"

    def _missing_reference(self, obj: GraphEdge) -> DomainError:
        return Conflict("edge refers to a node that no longer exists")


class SqlContextGraphRepository(SqlRepository[GraphNode]):
    table = graph_nodes
    rows = NODE_ROWS
    noun = "node"
    audited = GraphNode.audited
    unique_field = "id"

    def __init__(self, connection: SqlConnection) -> None:
        super().__init__(connection)
        self._edges = SqlEdges(connection)
        self._planned = False  # (Postgres: the walks' planner setting made in this transaction)

    @property
    def _dialect(self) -> str:
        return self.connection.dialect.name

    async def delete(self, organization_id: str, object_id: str) -> None:
        edges = graph_edges.c
        await self.connection.execute(
            graph_edges.delete().where(
                edges.organization_id == organization_id,
                sa.or_(edges.source_id == object_id, edges.target_id == object_id),
            )
        )
        await super().delete(organization_id, object_id)

    async def list_page(
        self,
        organization_id: str,
        page: PageRequest,
        *,
        labels: Sequence[str] = (),
        properties: Sequence[PropertyFilter] = (),
    ) -> tuple[list[GraphNode], int]:
        conditions = [_property_matches(self._dialect, wanted) for wanted in properties]
        if labels:
            conditions.append(_labels_held(self._dialect, labels))
        return await self.list_where(organization_id, page, *conditions)

    async def nodes(self, organization_id: str, node_ids: Sequence[str]) -> dict[str, GraphNode]:
        if not node_ids:
            return {}
        nodes = graph_nodes.c
        rows = await self.connection.execute(
            sa.select(graph_nodes).where(nodes.organization_id == organization_id, nodes.id.in_(list(node_ids)))
        )
        return {row.id: NODE_ROWS.to_domain(row) for row in rows}

    async def add_edge(self, edge: GraphEdge) -> None:
        await self._edges.add(edge)

    async def get_edge(self, organization_id: str, edge_id: str) -> GraphEdge | None:
        return await self._edges.get(organization_id, edge_id)

    async def delete_edge(self, organization_id: str, edge_id: str) -> None:
        await self._edges.delete(organization_id, edge_id)

    async def edges(self, organization_id: str, edge_ids: Sequence[str]) -> dict[str, GraphEdge]:
        if not edge_ids:
            return {}
        edges = graph_edges.c
        rows = await self.connection.execute(
            sa.select(graph_edges).where(edges.organization_id == organization_id, edges.id.in_(list(edge_ids)))
        )
        return {row.id: EDGE_ROWS.to_domain(row) for row in rows}

    async def edge_page(
        self,
        organization_id: str,
        page: PageRequest,
        *,
        type: str | None,
        source_id: str | None,
        target_id: str | None,
    ) -> tuple[list[GraphEdge], int]:
        return await self._edges.list_where(organization_id, page, type=type, source_id=source_id, target_id=target_id)

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
        walk = walks.Walk(organization_id, direction, edge_type, self._dialect)
        rows = await self._walked(organization_id, walks.reached(walk, node_id, depth, limit + 2, max_nodes))
        if rows and rows[0].visited > max_nodes:
            raise WalkTooLarge
        rows = [row for row in rows if row.id != node_id]  # (the start, at 0 moves)
        reached = [Reached(NODE_ROWS.to_domain(row), row.depth) for row in rows[:limit]]
        kept = [node_id, *(item.node.id for item in reached)]
        among = await self._walked(organization_id, walks.edges_among(walk, kept, limit + 1))
        edges = [EDGE_ROWS.to_domain(row) for row in among[:limit]]
        return Neighborhood(reached, edges, len(rows) > limit or len(among) > limit)

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
        walk = walks.Walk(organization_id, direction, edge_type, self._dialect)
        (found,) = await self._walked(organization_id, walks.distance(walk, source_id, target_id, max_depth, max_nodes))
        if found.visited is not None and found.visited > max_nodes:
            raise WalkTooLarge
        length = found.depth
        if length is None:
            return None
        if length == 0:
            return []
        rows = await self._walked(organization_id, walks.shortest_steps(walk, source_id, target_id, length, max_nodes))
        return [Step(row.from_id, row.to_id, row.edge_id, row.at) for row in rows]

    async def _walked(self, organization_id: str, statement: Any) -> list[Any]:
        """A walk's statement's rows, within MAX_WALK_MS (SQLite, in the loop's thread) or MAX_WALK_MS_OFF_LOOP
        (Postgres), else WalkTooLong: its time grows with the edges of the nodes it reaches, which `max_nodes` does
        not bound."""
        if self._dialect == "postgresql" and not self._planned:
            # every move an index search (walks.distances): the planner's statistics cannot tell a node with many
            # edges from one with none (a star's edges share one source), and it would scan them all a move
            self._planned = True
            await self.connection.execute(sa.text("SET LOCAL enable_seqscan = off"))
        limit = MAX_WALK_MS_OFF_LOOP if self._dialect == "postgresql" else MAX_WALK_MS
        try:
            return await self.connection.execute_within(statement, limit, organization_id=organization_id)
        except OverBudget:
            raise WalkTooLong(limit) from None
