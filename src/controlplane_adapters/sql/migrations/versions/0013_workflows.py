"""workflows, their runs and the runs' events; executions name the workflow run and step they run

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25 19:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "workflows",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("steps", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workflows")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_workflows_organization_id_name")),
    )
    op.create_index("ix_workflows_org_created", "workflows", ["organization_id", "created_at", "id"], unique=False)
    op.create_table(
        "workflow_runs",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("workflow_id", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("input", JSON, nullable=False),
        sa.Column("worker_queue_id", sa.String(length=64), nullable=False),
        sa.Column("definition", JSON, nullable=False),
        sa.Column("steps", JSON, nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workflow_runs")),
    )
    for name, columns in (
        ("ix_workflow_runs_org_created", ["organization_id", "created_at", "id"]),
        ("ix_workflow_runs_org_workflow", ["organization_id", "workflow_id", "created_at", "id"]),
        ("ix_workflow_runs_org_status", ["organization_id", "status", "created_at", "id"]),
    ):
        op.create_index(name, "workflow_runs", columns, unique=False)
    op.create_table(
        "workflow_run_events",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("data", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "seq", name=op.f("pk_workflow_run_events")),
    )
    with op.batch_alter_table("executions") as batch:
        batch.add_column(sa.Column("workflow_run_id", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("workflow_step_id", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("executions") as batch:
        batch.drop_column("workflow_step_id")
        batch.drop_column("workflow_run_id")
    op.drop_table("workflow_run_events")
    for name in ("ix_workflow_runs_org_status", "ix_workflow_runs_org_workflow", "ix_workflow_runs_org_created"):
        op.drop_index(name, table_name="workflow_runs")
    op.drop_table("workflow_runs")
    op.drop_index("ix_workflows_org_created", table_name="workflows")
    op.drop_table("workflows")
