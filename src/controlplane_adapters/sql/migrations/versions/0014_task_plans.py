"""task plans: a task planned by a worker, then run as a workflow run of its steps

Create Date: 2026-11-27 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0014"
down_revision = "0013"

INDEXES = parts.page_index("task_plans") | {
    "ix_task_plans_org_status": ["organization_id", "status", "created_at", "id"],
    "ix_task_plans_org_execution": ["organization_id", "execution_id"],
}


def upgrade() -> None:
    op.create_table(
        "task_plans",
        *parts.id_and_organization_columns(),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("worker_queue_id", sa.String(length=64), nullable=False),
        sa.Column("agent_ids", parts.JSON, nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("execution_id", sa.String(length=64), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("steps", parts.JSON, nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("workflow_id", sa.String(length=64), nullable=True),
        sa.Column("workflow_run_id", sa.String(length=64), nullable=True),
        *parts.timestamp_columns(),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        parts.primary_key("task_plans"),
    )
    parts.create_indexes("task_plans", INDEXES)


def downgrade() -> None:
    parts.drop_table("task_plans", list(reversed(INDEXES)))
