"""policies (Rego modules that guard actions) and the decision log

Create Date: 2026-11-25 22:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0015"
down_revision = "0014"

DECISION_INDEXES = parts.page_index("policy_decisions") | {
    "ix_policy_decisions_org_action": ["organization_id", "action", "created_at", "id"],
    "ix_policy_decisions_org_policy": ["organization_id", "policy_id", "created_at", "id"],
}


def upgrade() -> None:
    op.create_table(
        "policies",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("rego", sa.Text(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("enforcement", sa.String(length=16), nullable=False),
        sa.Column("actions", parts.JSON, nullable=False),
        *parts.timestamp_columns(),
        parts.primary_key("policies"),
        parts.unique_in_organization("policies", "name"),
    )
    parts.create_page_index("policies")
    op.create_table(
        "policy_decisions",
        *parts.id_and_organization_columns(),
        sa.Column("evaluation_id", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("policy_id", sa.String(length=64), nullable=False),
        sa.Column("policy_name", sa.String(length=255), nullable=False),
        sa.Column("enforcement", sa.String(length=16), nullable=False),
        sa.Column("allowed", sa.Boolean(), nullable=False),
        sa.Column("deny", parts.JSON, nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("subject", sa.String(length=255), nullable=True),
        sa.Column("roles", parts.JSON, nullable=False),
        sa.Column("resource_type", sa.String(length=32), nullable=False),
        sa.Column("resource_id", sa.String(length=64), nullable=True),
        parts.created_at_column(),
        parts.primary_key("policy_decisions"),
    )
    parts.create_indexes("policy_decisions", DECISION_INDEXES)


def downgrade() -> None:
    parts.drop_table("policy_decisions", list(DECISION_INDEXES))
    parts.drop_table("policies", ["ix_policies_org_created"])
