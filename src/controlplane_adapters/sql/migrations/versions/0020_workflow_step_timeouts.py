"""workflow runs: when the step timeout sweep looks at each run next (indexed)

Create Date: 2026-12-02 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"


def upgrade() -> None:
    # Runs started before this revision have no check (NULL): their steps' timeouts are not enforced.
    with op.batch_alter_table("workflow_runs") as batch:
        batch.add_column(sa.Column("timeout_check_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_workflow_runs_timeout_check_at", "workflow_runs", ["timeout_check_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_workflow_runs_timeout_check_at", table_name="workflow_runs")
    with op.batch_alter_table("workflow_runs") as batch:
        batch.drop_column("timeout_check_at")
