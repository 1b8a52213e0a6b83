"""the audit log: audit_events

Create Date: 2026-12-01 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    op.create_table(
        "audit_events",
        *parts.id_and_organization_columns(),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("action", sa.String(length=128), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("resource_type", sa.String(length=64), nullable=False),
        sa.Column("resource_id", sa.String(length=255), nullable=False),
        sa.Column("actor_subject", sa.String(length=255), nullable=False),
        sa.Column("actor_kind", sa.String(length=32), nullable=False),
        sa.Column("actor_role", sa.String(length=16), nullable=False),
        sa.Column("credential_id", sa.String(length=255), nullable=True),
        sa.Column("client_ip", sa.String(length=64), nullable=True),
        sa.Column("user_agent", sa.String(length=512), nullable=True),
        sa.Column("request_id", sa.String(length=128), nullable=True),
        sa.Column("details", parts.JSON, nullable=False),
        parts.primary_key("audit_events"),
    )
    parts.create_indexes(
        "audit_events",
        {
            "ix_audit_events_org_occurred": ["organization_id", "occurred_at", "id"],
            "ix_audit_events_org_resource": ["organization_id", "resource_type", "resource_id"],
        },
    )


def downgrade() -> None:
    parts.drop_table("audit_events", ["ix_audit_events_org_resource", "ix_audit_events_org_occurred"])
