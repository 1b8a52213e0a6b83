"""policies (Rego modules that guard actions) and the decision log

Revision ID: 0015
Revises: 0013
Create Date: 2026-11-25 22:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
DECISION_INDEXES = (
    ("ix_policy_decisions_org_created", ["organization_id", "created_at", "id"]),
    ("ix_policy_decisions_org_action", ["organization_id", "action", "created_at", "id"]),
    ("ix_policy_decisions_org_policy", ["organization_id", "policy_id", "created_at", "id"]),
)


def upgrade() -> None:
    op.create_table(
        "policies",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("rego", sa.Text(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("enforcement", sa.String(length=16), nullable=False),
        sa.Column("actions", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_policies")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_policies_organization_id_name")),
    )
    op.create_index("ix_policies_org_created", "policies", ["organization_id", "created_at", "id"], unique=False)
    op.create_table(
        "policy_decisions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("evaluation_id", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("policy_id", sa.String(length=64), nullable=False),
        sa.Column("policy_name", sa.String(length=255), nullable=False),
        sa.Column("enforcement", sa.String(length=16), nullable=False),
        sa.Column("allowed", sa.Boolean(), nullable=False),
        sa.Column("deny", JSON, nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("subject", sa.String(length=255), nullable=True),
        sa.Column("roles", JSON, nullable=False),
        sa.Column("resource_type", sa.String(length=32), nullable=False),
        sa.Column("resource_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_policy_decisions")),
    )
    for name, columns in DECISION_INDEXES:
        op.create_index(name, "policy_decisions", columns, unique=False)


def downgrade() -> None:
    for name, _ in DECISION_INDEXES:
        op.drop_index(name, table_name="policy_decisions")
    op.drop_table("policy_decisions")
    op.drop_index("ix_policies_org_created", table_name="policies")
    op.drop_table("policies")
