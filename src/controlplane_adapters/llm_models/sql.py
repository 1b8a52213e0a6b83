"""LLM models in SQL: the table, its row mapping, and the repository (unique by `value`)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, owned_table, timestamps
from controlplane_adapters.sql.rows import RowMapping
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.paging import PageRequest


class Price(sa.TypeDecorator[float]):
    """A double precision price. Both drivers hand back a float as it is (the hot statements, `sql/hot.py`, ask a
    type for its result processor without the column's type code, which asyncpg's Float needs)."""

    impl = sa.Float()
    cache_ok = True

    def result_processor(self, dialect: Dialect, coltype: Any) -> None:
        return None


llm_models = owned_table(
    "llm_models",
    sa.Column("value", sa.String(255), nullable=False),
    sa.Column("label", sa.String(255), nullable=False),
    sa.Column("provider", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    sa.Column("compatible_runtimes", Json, nullable=False),
    *timestamps(),
    sa.Column("input_cost_per_million", Price(), nullable=True),  # prices (migration 0016): analytics' cost
    sa.Column("output_cost_per_million", Price(), nullable=True),
    sa.Index("ix_llm_models_org_enabled", "organization_id", "enabled", "created_at", "id"),
    unique=("value",),
    stamped=False,
)


MODEL_ROWS = RowMapping(LlmModel, llm_models)


class SqlModelRepository(SqlRepository[LlmModel]):
    rows = MODEL_ROWS
    unique_field = "value"
    noun = "model"
    audited = LlmModel.audited

    async def list_page(
        self, organization_id: str, page: PageRequest, *, enabled_only: bool = False
    ) -> tuple[list[LlmModel], int]:
        enabled = (self.table.c.enabled.is_(True),) if enabled_only else ()
        return await self.list_where(organization_id, page, *enabled)
