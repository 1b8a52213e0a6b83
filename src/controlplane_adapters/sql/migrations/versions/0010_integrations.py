"""integrations (secret fields sealed in the row) and custom integrations

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25 19:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def _common() -> list[sa.Column[str]]:
    return [
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
    ]


def _default_custom_integration_ids() -> None:
    """Agents' and teams' stored execution environments get `custom_integration_ids: []` (a new field): the pages
    SQL renders from the stored JSON answer it as the domain path does. Without SQLite's JSON functions nothing is
    rendered by SQL (the domain path fills the default), so there is nothing to do."""
    bind = op.get_bind()
    for table in ("agents", "teams"):
        if bind.dialect.name == "postgresql":
            op.execute(
                f"UPDATE {table} SET execution_environment = execution_environment || "  # noqa: S608 - (a constant)
                "jsonb_build_object('custom_integration_ids', CAST('[]' AS jsonb)) "
                "WHERE jsonb_typeof(execution_environment) = 'object' "
                "AND NOT (execution_environment ? 'custom_integration_ids')"
            )
            continue
        try:
            bind.execute(sa.text("SELECT json_type('{}')"))
        except sa.exc.OperationalError:
            return
        op.execute(
            f"UPDATE {table} SET execution_environment = "  # noqa: S608 - (a constant table name)
            "json_set(execution_environment, '$.custom_integration_ids', json('[]')) "
            "WHERE json_type(execution_environment) = 'object' "
            "AND json_type(execution_environment, '$.custom_integration_ids') IS NULL"
        )


def upgrade() -> None:
    op.create_table(
        "integrations",
        *_common(),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("configuration", JSON, nullable=False),
        sa.Column("secret_fields", JSON, nullable=False),
        sa.Column("key_id", sa.String(length=16), nullable=True),
        sa.Column("sealed", sa.LargeBinary(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_integrations")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_integrations_organization_id_name")),
    )
    op.create_index(
        "ix_integrations_org_created", "integrations", ["organization_id", "created_at", "id"], unique=False
    )
    op.create_table(
        "custom_integrations",
        *_common(),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("env_vars", JSON, nullable=False),
        sa.Column("secret_names", JSON, nullable=False),
        sa.Column("files", JSON, nullable=False),
        sa.Column("setup_commands", JSON, nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_custom_integrations")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_custom_integrations_organization_id_name")),
    )
    op.create_index(
        "ix_custom_integrations_org_created",
        "custom_integrations",
        ["organization_id", "created_at", "id"],
        unique=False,
    )
    _default_custom_integration_ids()


def downgrade() -> None:
    op.drop_index("ix_custom_integrations_org_created", table_name="custom_integrations")
    op.drop_table("custom_integrations")
    op.drop_index("ix_integrations_org_created", table_name="integrations")
    op.drop_table("integrations")
