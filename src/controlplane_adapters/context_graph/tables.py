"""The context graph's tables: nodes, and edges between two of them."""

from __future__ import annotations

import sqlalchemy as sa

from controlplane_adapters.sql.columns import Json, owned_table

graph_nodes = owned_table(
    "graph_nodes",
    sa.Column("labels", Json, nullable=False),
    sa.Column("properties", Json, nullable=False),
    sa.Index("ix_graph_nodes_labels", "labels", postgresql_using="gin").ddl_if(dialect="postgresql"),
)


def _node_reference(name: str) -> sa.Column[str]:
    """An end of an edge: a node (the edge is deleted with it, should a delete not have taken it first)."""
    return sa.Column(name, sa.String(64), sa.ForeignKey("graph_nodes.id", ondelete="CASCADE"), nullable=False)


graph_edges = owned_table(
    "graph_edges",
    sa.Column("type", sa.String(64), nullable=False),
    _node_reference("source_id"),
    _node_reference("target_id"),
    sa.Column("properties", Json, nullable=False),
    sa.Index("ix_graph_edges_source", "source_id", "type"),
    sa.Index("ix_graph_edges_target", "target_id", "type"),
)
