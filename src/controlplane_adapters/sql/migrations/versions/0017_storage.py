"""storage: the stored files' metadata, and an organization's own storage quota

Create Date: 2026-11-25 22:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0017"
down_revision = "0016"


def upgrade() -> None:
    op.create_table(
        "stored_files",
        *parts.id_and_organization_columns(),
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("content_type", sa.String(length=255), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("blob_key", sa.String(length=255), nullable=False),
        *parts.timestamp_columns(),
        parts.primary_key("stored_files"),
        parts.unique_in_organization("stored_files", "path"),
    )
    with op.batch_alter_table("organization_settings") as batch:
        batch.add_column(sa.Column("storage_quota_bytes", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("organization_settings") as batch:
        batch.drop_column("storage_quota_bytes")
    op.drop_table("stored_files")
