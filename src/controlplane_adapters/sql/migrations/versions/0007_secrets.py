"""secrets (sealed values) and their accesses

Create Date: 2026-11-26 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    op.create_table(
        "secrets",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("key_id", sa.String(length=16), nullable=False),
        sa.Column("sealed", sa.LargeBinary(), nullable=False),
        *parts.timestamp_columns(),
        sa.Column("last_accessed_at", sa.DateTime(timezone=True), nullable=True),
        parts.primary_key("secrets"),
        parts.unique_in_organization("secrets", "name"),
    )
    parts.create_page_index("secrets")
    op.create_table(
        "secret_accesses",
        *parts.id_and_organization_columns(),
        sa.Column("secret_id", sa.String(length=64), nullable=False),
        sa.Column("execution_id", sa.String(length=64), nullable=False),
        sa.Column("worker_id", sa.String(length=255), nullable=False),
        sa.Column("accessed_at", sa.DateTime(timezone=True), nullable=False),
        parts.foreign_key("secret_accesses", "secret_id", "secrets", ondelete="CASCADE"),
        parts.primary_key("secret_accesses"),
    )
    parts.create_indexes("secret_accesses", {"ix_secret_accesses_secret": ["secret_id", "accessed_at", "id"]})


def downgrade() -> None:
    parts.drop_table("secret_accesses", ["ix_secret_accesses_secret"])
    parts.drop_table("secrets", ["ix_secrets_org_created"])
