"""jobs (cron, webhook and manual triggers) and their runs

Create Date: 2026-11-27 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0012"
down_revision = "0010"


def upgrade() -> None:
    op.create_table(
        "jobs",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("trigger_type", sa.String(length=16), nullable=False),
        sa.Column("cron", sa.String(length=255), nullable=True),
        sa.Column("timezone", sa.String(length=64), nullable=True),
        sa.Column("target_kind", sa.String(length=16), nullable=False),
        sa.Column("target_id", sa.String(length=64), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("worker_queue_id", sa.String(length=64), nullable=True),
        sa.Column("overlap", sa.String(length=16), nullable=False),
        sa.Column("misfire", sa.String(length=16), nullable=False),
        sa.Column("next_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("secret_key_id", sa.String(length=64), nullable=True),
        sa.Column("secret_sealed", sa.LargeBinary(), nullable=True),
        *parts.timestamp_columns(),
        parts.primary_key("jobs"),
        parts.unique_in_organization("jobs", "name"),
    )
    parts.create_indexes("jobs", parts.page_index("jobs") | {"ix_jobs_next_run_at": ["next_run_at"]})
    op.create_table(
        "job_runs",
        *parts.id_and_organization_columns(),
        sa.Column("job_id", sa.String(length=64), nullable=False),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column("fired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("scheduled_for", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("execution_id", sa.String(length=64), nullable=True),
        sa.Column("workflow_run_id", sa.String(length=64), nullable=True),
        sa.Column("skipped_reason", sa.Text(), nullable=True),
        sa.Column("webhook_id", sa.String(length=255), nullable=True),
        parts.created_at_column(),
        parts.foreign_key("job_runs", "job_id", "jobs", ondelete="CASCADE"),
        parts.primary_key("job_runs"),
        sa.UniqueConstraint("job_id", "webhook_id", name=op.f("uq_job_runs_job_id_webhook_id")),
    )
    parts.create_indexes("job_runs", {"ix_job_runs_job_fired": ["job_id", "fired_at", "id"]})


def downgrade() -> None:
    parts.drop_table("job_runs", ["ix_job_runs_job_fired"])
    parts.drop_table("jobs", ["ix_jobs_next_run_at", "ix_jobs_org_created"])
