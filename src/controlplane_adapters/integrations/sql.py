"""Integrations in SQL: the integrations table (plain fields as JSON, secret fields sealed in `sealed` with the id
of the key in `key_id`), the custom integrations table, the row mappings and the repositories."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, owned_table
from controlplane_adapters.sql.rows import RowMapping, sealed
from controlplane_domain.integrations.entity import CustomIntegration, Integration

integrations = owned_table(
    "integrations",
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("configuration", Json, nullable=False),
    sa.Column("secret_fields", Json, nullable=False),
    sa.Column("key_id", sa.String(16), nullable=True),
    sa.Column("sealed", sa.LargeBinary(), nullable=True),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    unique=("name",),
)

custom_integrations = owned_table(
    "custom_integrations",
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("env_vars", Json, nullable=False),
    sa.Column("secret_names", Json, nullable=False),
    sa.Column("files", Json, nullable=False),
    sa.Column("setup_commands", Json, nullable=False),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    unique=("name",),
)


CUSTOM_ROWS = RowMapping(CustomIntegration, custom_integrations)


def _many(table: sa.Table, organization_id: str, ids: Sequence[str]) -> sa.Select[Any]:
    return sa.select(table).where(table.c.organization_id == organization_id, table.c.id.in_(list(set(ids))))


class SqlIntegrationRepository(SqlRepository[Integration]):
    rows = RowMapping(Integration, integrations, sealed=sealed())
    noun = "integration"
    audited = Integration.audited

    async def get_many(self, organization_id: str, integration_ids: Sequence[str]) -> list[Integration]:
        if not integration_ids:
            return []
        return [
            self._saw(row) for row in await self.connection.execute(_many(self.table, organization_id, integration_ids))
        ]

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Integration]:
        return await self._sealed_elsewhere(self.table.c.key_id, key_id, limit, self.table.c.sealed.is_not(None))


class SqlCustomIntegrationRepository(SqlRepository[CustomIntegration]):
    rows = CUSTOM_ROWS
    noun = "custom integration"
    audited = CustomIntegration.audited

    async def get_many(self, organization_id: str, integration_ids: Sequence[str]) -> list[CustomIntegration]:
        if not integration_ids:
            return []
        return [
            self._saw(row) for row in await self.connection.execute(_many(self.table, organization_id, integration_ids))
        ]
