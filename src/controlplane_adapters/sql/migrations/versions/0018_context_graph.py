"""the context graph: nodes and the edges between them

Revision ID: 0018
Revises: 0013
Create Date: 2026-11-26 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def _end(name: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [name], ["graph_nodes.id"], name=op.f(f"fk_graph_edges_{name}_graph_nodes"), ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "graph_nodes",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("labels", JSON, nullable=False),
        sa.Column("properties", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_graph_nodes")),
    )
    op.create_index("ix_graph_nodes_org_created", "graph_nodes", ["organization_id", "created_at", "id"])
    if op.get_bind().dialect.name == "postgresql":  # the labels' containment (`@>`); SQLite reads them by json_each
        op.create_index("ix_graph_nodes_labels", "graph_nodes", ["labels"], postgresql_using="gin")
    op.create_table(
        "graph_edges",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("target_id", sa.String(length=64), nullable=False),
        sa.Column("properties", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        _end("source_id"),
        _end("target_id"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_graph_edges")),
    )
    op.create_index("ix_graph_edges_org_created", "graph_edges", ["organization_id", "created_at", "id"])
    op.create_index("ix_graph_edges_source", "graph_edges", ["source_id", "type"])
    op.create_index("ix_graph_edges_target", "graph_edges", ["target_id", "type"])


def downgrade() -> None:
    for name in ("ix_graph_edges_target", "ix_graph_edges_source", "ix_graph_edges_org_created"):
        op.drop_index(name, table_name="graph_edges")
    op.drop_table("graph_edges")
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_graph_nodes_labels", table_name="graph_nodes")
    op.drop_index("ix_graph_nodes_org_created", table_name="graph_nodes")
    op.drop_table("graph_nodes")
