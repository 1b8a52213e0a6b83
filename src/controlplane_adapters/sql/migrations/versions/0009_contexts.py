"""contexts of projects, environments, teams and agents, and the contexts stored with executions

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 18:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
OWNERS = (("project_id", "projects"), ("environment_id", "environments"), ("team_id", "teams"), ("agent_id", "agents"))


def upgrade() -> None:
    op.create_table(
        "contexts",
        sa.Column("owner_id", sa.String(length=64), nullable=False),
        sa.Column("owner_type", sa.String(length=16), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        *(sa.Column(column, sa.String(length=64), nullable=True) for column, _ in OWNERS),
        sa.Column("instructions", sa.Text(), nullable=False),
        sa.Column("knowledge", JSON, nullable=False),
        sa.Column("variables", JSON, nullable=False),
        sa.Column("storage_paths", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        *(
            sa.ForeignKeyConstraint(
                [column], [f"{referred}.id"], name=op.f(f"fk_contexts_{column}_{referred}"), ondelete="CASCADE"
            )
            for column, referred in OWNERS
        ),
        sa.PrimaryKeyConstraint("owner_id", name=op.f("pk_contexts")),
        *(sa.UniqueConstraint(column, name=op.f(f"uq_contexts_{column}")) for column, _ in OWNERS),
    )
    op.create_index("ix_contexts_organization_id", "contexts", ["organization_id"], unique=False)
    op.create_table(
        "execution_contexts",
        sa.Column("execution_id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("context", JSON, nullable=False),
        sa.ForeignKeyConstraint(
            ["execution_id"],
            ["executions.id"],
            name=op.f("fk_execution_contexts_execution_id_executions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("execution_id", name=op.f("pk_execution_contexts")),
    )


def downgrade() -> None:
    op.drop_table("execution_contexts")
    op.drop_index("ix_contexts_organization_id", table_name="contexts")
    op.drop_table("contexts")
