"""environments, worker queues, executions

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21 20:14:14.052960
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "environments",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column(
            "variables", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.Column(
            "metadata", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_environments")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_environments_organization_id_name")),
    )
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.create_index("ix_environments_org_created", ["organization_id", "created_at", "id"], unique=False)

    op.create_table(
        "execution_events",
        sa.Column("execution_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column(
            "data", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("execution_id", "seq", name=op.f("pk_execution_events")),
    )
    op.create_table(
        "executions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("target_type", sa.String(length=16), nullable=False),
        sa.Column("agent_id", sa.String(length=64), nullable=True),
        sa.Column("team_id", sa.String(length=64), nullable=True),
        sa.Column("worker_queue_id", sa.String(length=64), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("response", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column(
            "usage", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False
        ),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(length=255), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_executions")),
    )
    with op.batch_alter_table("executions", schema=None) as batch_op:
        batch_op.create_index("ix_executions_lease", ["status", "lease_expires_at"], unique=False)
        batch_op.create_index(
            "ix_executions_org_agent", ["organization_id", "agent_id", "created_at", "id"], unique=False
        )
        batch_op.create_index("ix_executions_org_created", ["organization_id", "created_at", "id"], unique=False)
        batch_op.create_index(
            "ix_executions_org_status", ["organization_id", "status", "created_at", "id"], unique=False
        )
        batch_op.create_index(
            "ix_executions_org_team", ["organization_id", "team_id", "created_at", "id"], unique=False
        )
        batch_op.create_index(
            "ix_executions_queue_status",
            ["organization_id", "worker_queue_id", "status", "queued_at", "id"],
            unique=False,
        )
        batch_op.create_index("ix_executions_worker", ["organization_id", "worker_id", "status"], unique=False)

    op.create_table(
        "worker_queues",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("environment_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("max_workers", sa.Integer(), nullable=True),
        sa.Column("heartbeat_interval_seconds", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["environment_id"], ["environments.id"], name=op.f("fk_worker_queues_environment_id_environments")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_worker_queues")),
        sa.UniqueConstraint(
            "organization_id",
            "environment_id",
            "name",
            name=op.f("uq_worker_queues_organization_id_environment_id_name"),
        ),
    )
    with op.batch_alter_table("worker_queues", schema=None) as batch_op:
        batch_op.create_index("ix_worker_queues_org_created", ["organization_id", "created_at", "id"], unique=False)
        batch_op.create_index(
            "ix_worker_queues_org_env", ["organization_id", "environment_id", "created_at", "id"], unique=False
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

    with op.batch_alter_table("worker_queues", schema=None) as batch_op:
        batch_op.drop_index("ix_worker_queues_org_env")
        batch_op.drop_index("ix_worker_queues_org_created")

    op.drop_table("worker_queues")
    with op.batch_alter_table("executions", schema=None) as batch_op:
        batch_op.drop_index("ix_executions_worker")
        batch_op.drop_index("ix_executions_queue_status")
        batch_op.drop_index("ix_executions_org_team")
        batch_op.drop_index("ix_executions_org_status")
        batch_op.drop_index("ix_executions_org_created")
        batch_op.drop_index("ix_executions_org_agent")
        batch_op.drop_index("ix_executions_lease")

    op.drop_table("executions")
    op.drop_table("execution_events")
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.drop_index("ix_environments_org_created")

    op.drop_table("environments")
