"""task plans: a task planned by a worker, then run as a workflow run of its steps

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
INDEXES = (
    ("ix_task_plans_org_created", ["organization_id", "created_at", "id"]),
    ("ix_task_plans_org_status", ["organization_id", "status", "created_at", "id"]),
    ("ix_task_plans_org_execution", ["organization_id", "execution_id"]),
)


def upgrade() -> None:
    op.create_table(
        "task_plans",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("worker_queue_id", sa.String(length=64), nullable=False),
        sa.Column("agent_ids", JSON, nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("execution_id", sa.String(length=64), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("steps", JSON, nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("workflow_id", sa.String(length=64), nullable=True),
        sa.Column("workflow_run_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_plans")),
    )
    for name, columns in INDEXES:
        op.create_index(name, "task_plans", columns, unique=False)


def downgrade() -> None:
    for name, _ in reversed(INDEXES):
        op.drop_index(name, table_name="task_plans")
    op.drop_table("task_plans")
