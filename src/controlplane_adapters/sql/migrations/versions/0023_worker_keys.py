"""API keys of role `worker` may be bound to environments and worker queues (NULL: unbound, and every other key)"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0023"
down_revision = "0022"


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("environment_ids", parts.JSON, nullable=True))
        batch.add_column(sa.Column("queue_ids", parts.JSON, nullable=True))


def downgrade() -> None:
    # Worker keys go with their role: the code before it reads no such role, and a bound key would otherwise
    # outlive its bindings (reaching every queue).
    op.execute(sa.text("DELETE FROM api_keys WHERE role = 'worker'"))
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("queue_ids")
        batch.drop_column("environment_ids")
