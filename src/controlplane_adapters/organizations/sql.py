"""Organizations in SQL: the settings table (one row an organization), its row mapping, and the repository."""

from __future__ import annotations

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlConnection
from controlplane_adapters.sql.columns import UtcDateTime, metadata
from controlplane_adapters.sql.rows import RowMapping
from controlplane_adapters.sql.statements import upsert
from controlplane_domain.organizations.entity import OrganizationSettings

organization_settings = sa.Table(
    "organization_settings",
    metadata,
    sa.Column("organization_id", sa.String(255), primary_key=True),
    sa.Column("tier", sa.String(32), nullable=False),
    sa.Column("rate_limit_per_minute", sa.Integer(), nullable=True),
    sa.Column("worker_rate_limit_per_minute", sa.Integer(), nullable=True),
    sa.Column("storage_quota_bytes", sa.BigInteger(), nullable=True),
    sa.Column("updated_at", UtcDateTime(), nullable=True),
)


SETTINGS_ROWS = RowMapping(OrganizationSettings, organization_settings)


class SqlOrganizationRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection

    async def get_settings(self, organization_id: str) -> OrganizationSettings | None:
        t = organization_settings
        row = (await self.connection.execute(sa.select(t).where(t.c.organization_id == organization_id))).first()
        return None if row is None else SETTINGS_ROWS.to_domain(row)

    async def save_settings(self, settings: OrganizationSettings) -> None:
        statement = upsert(self.connection.dialect.name, organization_settings, ("organization_id",))
        await self.connection.execute(statement, SETTINGS_ROWS.to_row(settings))
