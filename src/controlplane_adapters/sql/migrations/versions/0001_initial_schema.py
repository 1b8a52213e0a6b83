"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-21 19:45:12.957194
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations.table_parts import (
    JSON,
    create_indexes,
    create_page_index,
    drop_table,
    foreign_key,
    id_and_organization_columns,
    organization_id_column,
    page_index,
    primary_key,
    timestamp_columns,
    unique_in_organization,
)

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "llm_models",
        *id_and_organization_columns(),
        sa.Column("value", sa.String(length=255), nullable=False),
        sa.Column("label", sa.String(length=255), nullable=False),
        sa.Column("provider", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("compatible_runtimes", JSON, nullable=False),
        *timestamp_columns(),
        primary_key("llm_models"),
        unique_in_organization("llm_models", "value"),
    )
    create_indexes(
        "llm_models",
        page_index("llm_models") | {"ix_llm_models_org_enabled": ["organization_id", "enabled", "created_at", "id"]},
    )

    op.create_table(
        "teams",
        *id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("runtime", sa.String(length=64), nullable=False),
        sa.Column("configuration", JSON, nullable=False),
        sa.Column("skill_ids", JSON, nullable=True),
        sa.Column("execution_environment", JSON, nullable=True),
        *timestamp_columns(),
        primary_key("teams"),
        unique_in_organization("teams", "name"),
    )
    create_page_index("teams")

    op.create_table(
        "workers",
        organization_id_column(),
        sa.Column("worker_id", sa.String(length=255), nullable=False),
        sa.Column("environment_name", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("tasks_processed", sa.BigInteger(), nullable=False),
        sa.Column("current_task_id", sa.String(length=255), nullable=True),
        sa.Column("worker_metadata", JSON, nullable=False),
        sa.Column("heartbeat_interval_seconds", sa.Integer(), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        primary_key("workers", "organization_id", "worker_id"),
    )
    create_indexes("workers", {"ix_workers_org_registered": ["organization_id", "registered_at", "worker_id"]})

    op.create_table(
        "agents",
        *id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("runtime", sa.String(length=64), nullable=False),
        sa.Column("model_id", sa.String(length=255), nullable=True),
        sa.Column("system_prompt", sa.Text(), nullable=True),
        sa.Column("team_id", sa.String(length=64), nullable=True),
        sa.Column("capabilities", JSON, nullable=False),
        sa.Column("skill_ids", JSON, nullable=False),
        sa.Column("execution_environment", JSON, nullable=True),
        sa.Column("configuration", JSON, nullable=False),
        *timestamp_columns(),
        foreign_key("agents", "team_id", "teams", ondelete="SET NULL"),
        primary_key("agents"),
        unique_in_organization("agents", "name"),
    )
    create_indexes(
        "agents", page_index("agents") | {"ix_agents_org_team": ["organization_id", "team_id", "created_at", "id"]}
    )


def downgrade() -> None:
    drop_table("agents", ["ix_agents_org_team", "ix_agents_org_created"])
    drop_table("workers", ["ix_workers_org_registered"])
    drop_table("teams", ["ix_teams_org_created"])
    drop_table("llm_models", ["ix_llm_models_org_enabled", "ix_llm_models_org_created"])
