"""jobs (cron, webhook and manual triggers) and their runs

Revision ID: 0012
Revises: 0010
Create Date: 2026-11-27 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
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
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_jobs_organization_id_name")),
    )
    op.create_index("ix_jobs_org_created", "jobs", ["organization_id", "created_at", "id"], unique=False)
    op.create_index("ix_jobs_next_run_at", "jobs", ["next_run_at"], unique=False)
    op.create_table(
        "job_runs",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("job_id", sa.String(length=64), nullable=False),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column("fired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("scheduled_for", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("execution_id", sa.String(length=64), nullable=True),
        sa.Column("workflow_run_id", sa.String(length=64), nullable=True),
        sa.Column("skipped_reason", sa.Text(), nullable=True),
        sa.Column("webhook_id", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_job_runs_job_id_jobs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_runs")),
        sa.UniqueConstraint("job_id", "webhook_id", name=op.f("uq_job_runs_job_id_webhook_id")),
    )
    op.create_index("ix_job_runs_job_fired", "job_runs", ["job_id", "fired_at", "id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_job_runs_job_fired", table_name="job_runs")
    op.drop_table("job_runs")
    op.drop_index("ix_jobs_next_run_at", table_name="jobs")
    op.drop_index("ix_jobs_org_created", table_name="jobs")
    op.drop_table("jobs")
