"""environments, worker queues, executions

Create Date: 2026-11-21 20:14:14.052960
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "environments",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("variables", parts.JSON, nullable=False),
        sa.Column("metadata", parts.JSON, nullable=False),
        *parts.timestamp_columns(),
        parts.primary_key("environments"),
        parts.unique_in_organization("environments", "name"),
    )
    parts.create_page_index("environments")

    op.create_table(
        "execution_events",
        sa.Column("execution_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        parts.organization_id_column(),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("data", parts.JSON, nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        parts.created_at_column(),
        parts.primary_key("execution_events", "execution_id", "seq"),
    )
    op.create_table(
        "executions",
        *parts.id_and_organization_columns(),
        sa.Column("target_type", sa.String(length=16), nullable=False),
        sa.Column("agent_id", sa.String(length=64), nullable=True),
        sa.Column("team_id", sa.String(length=64), nullable=True),
        sa.Column("worker_queue_id", sa.String(length=64), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("response", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("usage", parts.JSON, nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(length=255), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        *parts.timestamp_columns(),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        parts.primary_key("executions"),
    )
    parts.create_indexes(
        "executions",
        {
            "ix_executions_lease": ["status", "lease_expires_at"],
            "ix_executions_org_agent": ["organization_id", "agent_id", "created_at", "id"],
            **parts.page_index("executions"),
            "ix_executions_org_status": ["organization_id", "status", "created_at", "id"],
            "ix_executions_org_team": ["organization_id", "team_id", "created_at", "id"],
            "ix_executions_queue_status": ["organization_id", "worker_queue_id", "status", "queued_at", "id"],
            "ix_executions_worker": ["organization_id", "worker_id", "status"],
        },
    )

    op.create_table(
        "worker_queues",
        *parts.id_and_organization_columns(),
        sa.Column("environment_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("max_workers", sa.Integer(), nullable=True),
        sa.Column("heartbeat_interval_seconds", sa.Integer(), nullable=False),
        *parts.timestamp_columns(),
        parts.foreign_key("worker_queues", "environment_id", "environments", ondelete=None),
        parts.primary_key("worker_queues"),
        parts.unique_in_organization("worker_queues", "environment_id", "name"),
    )
    parts.create_indexes(
        "worker_queues",
        parts.page_index("worker_queues")
        | {"ix_worker_queues_org_env": ["organization_id", "environment_id", "created_at", "id"]},
    )

    with op.batch_alter_table("workers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("queue_id", sa.String(length=64), nullable=True))
        batch_op.create_index(
            "ix_workers_org_queue_seen", ["organization_id", "queue_id", "last_heartbeat_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("workers", schema=None) as batch_op:
        batch_op.drop_index("ix_workers_org_queue_seen")
        batch_op.drop_column("queue_id")

    parts.drop_table("worker_queues", ["ix_worker_queues_org_env", "ix_worker_queues_org_created"])
    parts.drop_table(
        "executions",
        [
            "ix_executions_worker",
            "ix_executions_queue_status",
            "ix_executions_org_team",
            "ix_executions_org_status",
            "ix_executions_org_created",
            "ix_executions_org_agent",
            "ix_executions_lease",
        ],
    )
    parts.drop_table("execution_events")
    parts.drop_table("environments", ["ix_environments_org_created"])
