"""templates: organizations' agent and team templates (built-in templates are code, not rows)

Create Date: 2026-11-26 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    op.create_table(
        "templates",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("parameters", parts.JSON, nullable=False),
        sa.Column("body", parts.JSON, nullable=False),
        *parts.timestamp_columns(),
        parts.primary_key("templates"),
        parts.unique_in_organization("templates", "name"),
    )
    parts.create_page_index("templates")


def downgrade() -> None:
    parts.drop_table("templates", ["ix_templates_org_created"])
