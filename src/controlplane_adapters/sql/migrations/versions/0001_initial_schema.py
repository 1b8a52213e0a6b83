"""initial schema

Create Date: 2026-11-21 19:45:12.957194
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "llm_models",
        *parts.id_and_organization_columns(),
        sa.Column("value", sa.String(length=255), nullable=False),
        sa.Column("label", sa.String(length=255), nullable=False),
        sa.Column("provider", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("compatible_runtimes", parts.JSON, nullable=False),
        *parts.timestamp_columns(),
        parts.primary_key("llm_models"),
        parts.unique_in_organization("llm_models", "value"),
    )
    parts.create_indexes(
        "llm_models",
        parts.page_index("llm_models")
        | {"ix_llm_models_org_enabled": ["organization_id", "enabled", "created_at", "id"]},
    )

    op.create_table(
        "teams",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("runtime", sa.String(length=64), nullable=False),
        sa.Column("configuration", parts.JSON, nullable=False),
        sa.Column("skill_ids", parts.JSON, nullable=True),
        sa.Column("execution_environment", parts.JSON, nullable=True),
        *parts.timestamp_columns(),
        parts.primary_key("teams"),
        parts.unique_in_organization("teams", "name"),
    )
    parts.create_page_index("teams")

    op.create_table(
        "workers",
        parts.organization_id_column(),
        sa.Column("worker_id", sa.String(length=255), nullable=False),
        sa.Column("environment_name", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("tasks_processed", sa.BigInteger(), nullable=False),
        sa.Column("current_task_id", sa.String(length=255), nullable=True),
        sa.Column("worker_metadata", parts.JSON, nullable=False),
        sa.Column("heartbeat_interval_seconds", sa.Integer(), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        parts.primary_key("workers", "organization_id", "worker_id"),
    )
    parts.create_indexes("workers", {"ix_workers_org_registered": ["organization_id", "registered_at", "worker_id"]})

    op.create_table(
        "agents",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("runtime", sa.String(length=64), nullable=False),
        sa.Column("model_id", sa.String(length=255), nullable=True),
        sa.Column("system_prompt", sa.Text(), nullable=True),
        sa.Column("team_id", sa.String(length=64), nullable=True),
        sa.Column("capabilities", parts.JSON, nullable=False),
        sa.Column("skill_ids", parts.JSON, nullable=False),
        sa.Column("execution_environment", parts.JSON, nullable=True),
        sa.Column("configuration", parts.JSON, nullable=False),
        *parts.timestamp_columns(),
        parts.foreign_key("agents", "team_id", "teams", ondelete="SET NULL"),
        parts.primary_key("agents"),
        parts.unique_in_organization("agents", "name"),
    )
    parts.create_indexes(
        "agents",
        parts.page_index("agents") | {"ix_agents_org_team": ["organization_id", "team_id", "created_at", "id"]},
    )


def downgrade() -> None:
    parts.drop_table("agents", ["ix_agents_org_team", "ix_agents_org_created"])
    parts.drop_table("workers", ["ix_workers_org_registered"])
    parts.drop_table("teams", ["ix_teams_org_created"])
    parts.drop_table("llm_models", ["ix_llm_models_org_enabled", "ix_llm_models_org_created"])
