"""executions keep what they were run with: their agent's or team's name, model, prices, agent's team

An execution's history no longer follows its agent, team or model: the new columns are written when it is added
(`executions.entity.RunWith`) and never changed. The rows that exist are filled here from their agent or team and
model as they are now (the best knowledge there is); a row whose agent or team is already gone keeps NULLs, which
the readers take as unknown (no name, no model, not priced: docs/analytics.md "History").
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

revision = "0024"
down_revision = "0023"

COLUMNS = ("target_name", "model", "input_cost_per_million", "output_cost_per_million", "agent_team_id")


def _backfill() -> None:
    """The rule of `executions.statements.run_with_of` as it was when this migration was written: one UPDATE for
    agents' executions, one for teams'."""
    e = sa.table("executions", *(sa.column(name) for name in ("organization_id", "agent_id", "team_id", *COLUMNS)))
    a = sa.table("agents", *(sa.column(name) for name in ("id", "organization_id", "name", "model_id", "team_id")))
    t = sa.table("teams", sa.column("id"), sa.column("organization_id"), sa.column("name"))
    m = sa.table(
        "llm_models",
        *(sa.column(name) for name in ("id", "organization_id", "value", "input_cost_per_million",
                                        "output_cost_per_million")),
    )  # fmt: skip
    by_id, by_value = m.alias("by_id"), m.alias("by_value")
    the_agent = sa.and_(a.c.organization_id == e.c.organization_id, a.c.id == e.c.agent_id)

    def of_model(column: str) -> sa.ScalarSelect[object]:
        named = sa.select(by_id.c[column]).where(by_id.c.organization_id == a.c.organization_id,
                                                 by_id.c.id == a.c.model_id)  # fmt: skip
        by_val = sa.select(by_value.c[column]).where(by_value.c.organization_id == a.c.organization_id,
                                                     by_value.c.value == a.c.model_id)  # fmt: skip
        has_id = sa.exists().where(by_id.c.organization_id == a.c.organization_id, by_id.c.id == a.c.model_id)
        if column == "value":
            chosen: sa.ColumnElement[object] = sa.func.coalesce(
                named.scalar_subquery(), by_val.scalar_subquery(), a.c.model_id
            )
        else:
            chosen = sa.case((has_id, named.scalar_subquery()), else_=by_val.scalar_subquery())
        return sa.select(chosen).where(the_agent).scalar_subquery()

    agent_values = {
        "target_name": sa.select(a.c.name).where(the_agent).scalar_subquery(),
        "model": of_model("value"),
        "input_cost_per_million": of_model("input_cost_per_million"),
        "output_cost_per_million": of_model("output_cost_per_million"),
        "agent_team_id": sa.select(a.c.team_id).where(the_agent).scalar_subquery(),
    }
    connection = op.get_bind()
    connection.execute(e.update().where(e.c.agent_id.isnot(None)).values(agent_values))
    the_team = sa.and_(t.c.organization_id == e.c.organization_id, t.c.id == e.c.team_id)
    team_name = sa.select(t.c.name).where(the_team).scalar_subquery()
    connection.execute(e.update().where(e.c.agent_id.is_(None), e.c.team_id.isnot(None)).values(target_name=team_name))


def upgrade() -> None:
    with op.batch_alter_table("executions") as batch_op:
        batch_op.add_column(sa.Column("target_name", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("model", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("input_cost_per_million", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("output_cost_per_million", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("agent_team_id", sa.String(length=64), nullable=True))
    if not context.is_offline_mode():  # (`migrate --sql` prints the schema: the rows' fill reads rows, run it online)
        _backfill()


def downgrade() -> None:
    with op.batch_alter_table("executions") as batch_op:
        for name in reversed(COLUMNS):
            batch_op.drop_column(name)
