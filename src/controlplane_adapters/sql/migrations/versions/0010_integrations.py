"""integrations (secret fields sealed in the row) and custom integrations

Create Date: 2026-11-25 19:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0010"
down_revision = "0009"


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
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("configuration", parts.JSON, nullable=False),
        sa.Column("secret_fields", parts.JSON, nullable=False),
        sa.Column("key_id", sa.String(length=16), nullable=True),
        sa.Column("sealed", sa.LargeBinary(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        *parts.timestamp_columns(),
        parts.primary_key("integrations"),
        parts.unique_in_organization("integrations", "name"),
    )
    parts.create_page_index("integrations")
    op.create_table(
        "custom_integrations",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("env_vars", parts.JSON, nullable=False),
        sa.Column("secret_names", parts.JSON, nullable=False),
        sa.Column("files", parts.JSON, nullable=False),
        sa.Column("setup_commands", parts.JSON, nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        *parts.timestamp_columns(),
        parts.primary_key("custom_integrations"),
        parts.unique_in_organization("custom_integrations", "name"),
    )
    parts.create_page_index("custom_integrations")
    _default_custom_integration_ids()


def downgrade() -> None:
    parts.drop_table("custom_integrations", ["ix_custom_integrations_org_created"])
    parts.drop_table("integrations", ["ix_integrations_org_created"])
