"""contexts of projects, environments, teams and agents, and the contexts stored with executions

Create Date: 2026-11-25 18:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0009"
down_revision = "0008"

OWNERS = (("project_id", "projects"), ("environment_id", "environments"), ("team_id", "teams"), ("agent_id", "agents"))


def upgrade() -> None:
    op.create_table(
        "contexts",
        sa.Column("owner_id", sa.String(length=64), nullable=False),
        sa.Column("owner_type", sa.String(length=16), nullable=False),
        parts.organization_id_column(),
        *(sa.Column(column, sa.String(length=64), nullable=True) for column, _ in OWNERS),
        sa.Column("instructions", sa.Text(), nullable=False),
        sa.Column("knowledge", parts.JSON, nullable=False),
        sa.Column("variables", parts.JSON, nullable=False),
        sa.Column("storage_paths", parts.JSON, nullable=False),
        *parts.timestamp_columns(),
        *(parts.foreign_key("contexts", column, referred, ondelete="CASCADE") for column, referred in OWNERS),
        parts.primary_key("contexts", "owner_id"),
        *(sa.UniqueConstraint(column, name=op.f(f"uq_contexts_{column}")) for column, _ in OWNERS),
    )
    parts.create_indexes("contexts", {"ix_contexts_organization_id": ["organization_id"]})
    op.create_table(
        "execution_contexts",
        sa.Column("execution_id", sa.String(length=64), nullable=False),
        parts.organization_id_column(),
        sa.Column("context", parts.JSON, nullable=False),
        parts.foreign_key("execution_contexts", "execution_id", "executions", ondelete="CASCADE"),
        parts.primary_key("execution_contexts", "execution_id"),
    )


def downgrade() -> None:
    op.drop_table("execution_contexts")
    parts.drop_table("contexts", ["ix_contexts_organization_id"])
