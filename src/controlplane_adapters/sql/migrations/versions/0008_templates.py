"""templates: organizations' agent and team templates (built-in templates are code, not rows)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "templates",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("parameters", JSON, nullable=False),
        sa.Column("body", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_templates")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_templates_organization_id_name")),
    )
    op.create_index("ix_templates_org_created", "templates", ["organization_id", "created_at", "id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_templates_org_created", table_name="templates")
    op.drop_table("templates")
