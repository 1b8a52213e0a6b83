"""analytics: models' prices; executions' token counts as columns (from their usage)

The models gain `input_cost_per_million` and `output_cost_per_million` (nullable: not priced). The executions
gain `prompt_tokens` and `completion_tokens` (nullable: not reported), which the row mapping writes with `usage`
(`controlplane_domain.analytics.facts.reported_tokens`); the rows that exist are filled here by the same rule,
in batches, so that the sums of analytics are plain column sums on both databases.

Create Date: 2026-11-26 10:00:00
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import context, op

revision = "0016"
down_revision = "0015"

MAX_TOKENS = 10**12
BATCH = 1000


def _count(usage: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    """The rule of `reported_tokens` as it was when this migration was written."""
    for key in keys:
        value = usage.get(key)
        if value is not None:
            return value if type(value) is int and 0 <= value <= MAX_TOKENS else None
    return None


def _backfill() -> None:
    connection = op.get_bind()
    executions = sa.table(
        "executions", sa.column("id", sa.String()), sa.column("usage", sa.Text()),
        sa.column("prompt_tokens", sa.BigInteger()), sa.column("completion_tokens", sa.BigInteger()),
    )  # fmt: skip
    as_text = sa.cast(executions.c.usage, sa.Text())
    update = (
        executions.update()
        .where(executions.c.id == sa.bindparam("row_id"))
        .values(prompt_tokens=sa.bindparam("prompt"), completion_tokens=sa.bindparam("completion"))
    )
    after = ""
    while True:
        rows = connection.execute(
            sa.select(executions.c.id, as_text)
            .where(executions.c.id > after, as_text.notin_(["{}", ""]))
            .order_by(executions.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        changes = []
        for row_id, text in rows:
            usage = json.loads(text) if text else {}
            if isinstance(usage, dict):
                prompt = _count(usage, ("prompt_tokens", "input_tokens"))
                completion = _count(usage, ("completion_tokens", "output_tokens"))
                if prompt is not None or completion is not None:
                    changes.append({"row_id": row_id, "prompt": prompt, "completion": completion})
        if changes:
            connection.execute(update, changes)
        after = rows[-1][0]


def upgrade() -> None:
    with op.batch_alter_table("llm_models") as batch_op:
        batch_op.add_column(sa.Column("input_cost_per_million", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("output_cost_per_million", sa.Float(), nullable=True))
    with op.batch_alter_table("executions") as batch_op:
        batch_op.add_column(sa.Column("prompt_tokens", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("completion_tokens", sa.BigInteger(), nullable=True))
    if not context.is_offline_mode():  # (`migrate --sql` prints the schema: the rows' fill reads rows, run it online)
        _backfill()


def downgrade() -> None:
    with op.batch_alter_table("executions") as batch_op:
        batch_op.drop_column("completion_tokens")
        batch_op.drop_column("prompt_tokens")
    with op.batch_alter_table("llm_models") as batch_op:
        batch_op.drop_column("output_cost_per_million")
        batch_op.drop_column("input_cost_per_million")
