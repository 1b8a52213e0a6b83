"""workflows, their runs and the runs' events; executions name the workflow run and step they run

Create Date: 2026-11-25 19:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0013"
down_revision = "0012"

RUN_INDEXES = parts.page_index("workflow_runs") | {
    "ix_workflow_runs_org_workflow": ["organization_id", "workflow_id", "created_at", "id"],
    "ix_workflow_runs_org_status": ["organization_id", "status", "created_at", "id"],
}


def upgrade() -> None:
    op.create_table(
        "workflows",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("steps", parts.JSON, nullable=False),
        *parts.timestamp_columns(),
        parts.primary_key("workflows"),
        parts.unique_in_organization("workflows", "name"),
    )
    parts.create_page_index("workflows")
    op.create_table(
        "workflow_runs",
        *parts.id_and_organization_columns(),
        sa.Column("workflow_id", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("input", parts.JSON, nullable=False),
        sa.Column("worker_queue_id", sa.String(length=64), nullable=False),
        sa.Column("definition", parts.JSON, nullable=False),
        sa.Column("steps", parts.JSON, nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        *parts.timestamp_columns(),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        parts.primary_key("workflow_runs"),
    )
    parts.create_indexes("workflow_runs", RUN_INDEXES)
    op.create_table(
        "workflow_run_events",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        parts.organization_id_column(),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("data", parts.JSON, nullable=False),
        parts.created_at_column(),
        parts.primary_key("workflow_run_events", "run_id", "seq"),
    )
    with op.batch_alter_table("executions") as batch:
        batch.add_column(sa.Column("workflow_run_id", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("workflow_step_id", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("executions") as batch:
        batch.drop_column("workflow_step_id")
        batch.drop_column("workflow_run_id")
    op.drop_table("workflow_run_events")
    parts.drop_table("workflow_runs", list(reversed(RUN_INDEXES)))
    parts.drop_table("workflows", ["ix_workflows_org_created"])
