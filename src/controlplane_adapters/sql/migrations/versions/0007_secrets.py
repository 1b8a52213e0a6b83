"""secrets (sealed values) and their accesses

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "secrets",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("key_id", sa.String(length=16), nullable=False),
        sa.Column("sealed", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_accessed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_secrets")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_secrets_organization_id_name")),
    )
    op.create_index("ix_secrets_org_created", "secrets", ["organization_id", "created_at", "id"], unique=False)
    op.create_table(
        "secret_accesses",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("secret_id", sa.String(length=64), nullable=False),
        sa.Column("execution_id", sa.String(length=64), nullable=False),
        sa.Column("worker_id", sa.String(length=255), nullable=False),
        sa.Column("accessed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["secret_id"], ["secrets.id"], name=op.f("fk_secret_accesses_secret_id_secrets"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_secret_accesses")),
    )
    op.create_index("ix_secret_accesses_secret", "secret_accesses", ["secret_id", "accessed_at", "id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_secret_accesses_secret", table_name="secret_accesses")
    op.drop_table("secret_accesses")
    op.drop_index("ix_secrets_org_created", table_name="secrets")
    op.drop_table("secrets")
