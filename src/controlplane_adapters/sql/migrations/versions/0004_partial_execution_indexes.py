"""executions: partial indexes for the statuses and targets that queries look for

A change of an execution's status writes an entry into every index whose predicate the new row meets. Most
executions are finished, most target an agent: the indexes of queued and of held executions, and of team and
of agent targets, hold only those rows. Listing by worker queue gets an index of its own (it used the queue
and status index before).

On a large executions table the new indexes are built while writes to it wait (inside the migration's
transaction); see docs/operations.md.

Create Date: 2026-11-22 21:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"

QUEUED = "status = 'queued'"
HELD = "status IN ('running', 'waiting_for_input')"
PARTIAL = (
    ("ix_executions_org_agent", ["organization_id", "agent_id", "created_at", "id"], "agent_id IS NOT NULL"),
    ("ix_executions_org_team", ["organization_id", "team_id", "created_at", "id"], "team_id IS NOT NULL"),
    ("ix_executions_queued", ["organization_id", "worker_queue_id", "queued_at", "id"], QUEUED),
    ("ix_executions_held_by", ["organization_id", "worker_id"], HELD),
    ("ix_executions_held_until", ["lease_expires_at"], HELD),
)


def upgrade() -> None:
    for name in ("ix_executions_org_agent", "ix_executions_org_team", "ix_executions_queue_status",
                 "ix_executions_worker", "ix_executions_lease"):  # fmt: skip
        op.drop_index(name, table_name="executions")
    for name, columns, where in PARTIAL:
        op.create_index(
            name, "executions", columns, unique=False, postgresql_where=sa.text(where), sqlite_where=sa.text(where)
        )
    op.create_index("ix_executions_org_queue", "executions", ["organization_id", "worker_queue_id", "created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_executions_org_queue", table_name="executions")
    for name, _, _ in PARTIAL:
        op.drop_index(name, table_name="executions")
    op.create_index("ix_executions_lease", "executions", ["status", "lease_expires_at"])
    op.create_index("ix_executions_org_agent", "executions", ["organization_id", "agent_id", "created_at", "id"])
    op.create_index("ix_executions_org_team", "executions", ["organization_id", "team_id", "created_at", "id"])
    op.create_index(
        "ix_executions_queue_status", "executions", ["organization_id", "worker_queue_id", "status", "queued_at", "id"]
    )
    op.create_index("ix_executions_worker", "executions", ["organization_id", "worker_id", "status"])
