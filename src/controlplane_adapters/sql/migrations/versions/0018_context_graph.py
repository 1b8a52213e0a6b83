"""the context graph: nodes and the edges between them

Create Date: 2026-11-26 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0018"
down_revision = "0017"

EDGE_INDEXES = parts.page_index("graph_edges") | {
    "ix_graph_edges_source": ["source_id", "type"],
    "ix_graph_edges_target": ["target_id", "type"],
}


def upgrade() -> None:
    op.create_table(
        "graph_nodes",
        *parts.id_and_organization_columns(),
        sa.Column("labels", parts.JSON, nullable=False),
        sa.Column("properties", parts.JSON, nullable=False),
        *parts.timestamp_columns(),
        parts.primary_key("graph_nodes"),
    )
    parts.create_page_index("graph_nodes")
    if op.get_bind().dialect.name == "postgresql":  # the labels' containment (`@>`); SQLite reads them by json_each
        op.create_index("ix_graph_nodes_labels", "graph_nodes", ["labels"], postgresql_using="gin")
    op.create_table(
        "graph_edges",
        *parts.id_and_organization_columns(),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("target_id", sa.String(length=64), nullable=False),
        sa.Column("properties", parts.JSON, nullable=False),
        *parts.timestamp_columns(),
        parts.foreign_key("graph_edges", "source_id", "graph_nodes", ondelete="CASCADE"),
        parts.foreign_key("graph_edges", "target_id", "graph_nodes", ondelete="CASCADE"),
        parts.primary_key("graph_edges"),
    )
    parts.create_indexes("graph_edges", EDGE_INDEXES)


def downgrade() -> None:
    parts.drop_table("graph_edges", list(reversed(EDGE_INDEXES)))
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_graph_nodes_labels", table_name="graph_nodes")
    parts.drop_table("graph_nodes", ["ix_graph_nodes_org_created"])
