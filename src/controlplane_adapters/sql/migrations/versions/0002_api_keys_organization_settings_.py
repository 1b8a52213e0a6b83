"""api keys, organization settings, idempotency

Create Date: 2026-11-21 19:59:20.868335
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_table(
        "api_keys",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("secret_hash", sa.String(length=128), nullable=False),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        parts.created_at_column(),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        parts.primary_key("api_keys"),
    )
    parts.create_page_index("api_keys")

    op.create_table(
        "idempotency_records",
        parts.organization_id_column(),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("content_type", sa.String(length=255), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=True),
        parts.created_at_column(),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        parts.primary_key("idempotency_records", "organization_id", "key"),
    )
    parts.create_indexes("idempotency_records", {"ix_idempotency_records_expires": ["expires_at"]})

    op.create_table(
        "organization_settings",
        parts.organization_id_column(),
        sa.Column("tier", sa.String(length=32), nullable=False),
        sa.Column("rate_limit_per_minute", sa.Integer(), nullable=True),
        sa.Column("worker_rate_limit_per_minute", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True),
        parts.primary_key("organization_settings", "organization_id"),
    )


def downgrade() -> None:
    parts.drop_table("organization_settings")
    parts.drop_table("idempotency_records", ["ix_idempotency_records_expires"])
    parts.drop_table("api_keys", ["ix_api_keys_org_created"])
