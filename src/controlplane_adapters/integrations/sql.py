"""Integrations in SQL: the integrations table (plain fields as JSON, secret fields sealed in `sealed` with the id
of the key in `key_id`), the custom integrations table, the row mappings and the repositories."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, id_column, metadata, organization_column, timestamps
from controlplane_domain.integrations.entity import CustomIntegration, Integration, IntegrationFile
from controlplane_domain.secrets.entity import SealedValue

integrations = sa.Table(
    "integrations",
    metadata,
    id_column(),
    organization_column(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("configuration", Json, nullable=False),
    sa.Column("secret_fields", Json, nullable=False),
    sa.Column("key_id", sa.String(16), nullable=True),
    sa.Column("sealed", sa.LargeBinary(), nullable=True),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    *timestamps(),
    sa.UniqueConstraint("organization_id", "name"),
    sa.Index("ix_integrations_org_created", "organization_id", "created_at", "id"),
)

custom_integrations = sa.Table(
    "custom_integrations",
    metadata,
    id_column(),
    organization_column(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("env_vars", Json, nullable=False),
    sa.Column("secret_names", Json, nullable=False),
    sa.Column("files", Json, nullable=False),
    sa.Column("setup_commands", Json, nullable=False),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    *timestamps(),
    sa.UniqueConstraint("organization_id", "name"),
    sa.Index("ix_custom_integrations_org_created", "organization_id", "created_at", "id"),
)


def integration_to_row(integration: Integration) -> dict[str, Any]:
    sealed = integration.sealed
    return {
        "id": integration.id,
        "organization_id": integration.organization_id,
        "name": integration.name,
        "kind": integration.kind,
        "configuration": integration.configuration,
        "secret_fields": list(integration.secret_fields),
        "key_id": None if sealed is None else sealed.key_id,
        "sealed": None if sealed is None else sealed.data,
        "enabled": integration.enabled,
        "created_at": integration.created_at,
        "updated_at": integration.updated_at,
    }


def integration_to_domain(row: Any) -> Integration:
    return Integration(
        id=row.id,
        organization_id=row.organization_id,
        name=row.name,
        kind=row.kind,
        configuration=dict(row.configuration),
        secret_fields=tuple(row.secret_fields),
        sealed=None if row.sealed is None else SealedValue(row.key_id, bytes(row.sealed)),
        enabled=bool(row.enabled),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def custom_to_row(integration: CustomIntegration) -> dict[str, Any]:
    return {
        "id": integration.id,
        "organization_id": integration.organization_id,
        "name": integration.name,
        "description": integration.description,
        "env_vars": integration.env_vars,
        "secret_names": integration.secret_names,
        "files": [{"path": file.path, "content": file.content, "mode": file.mode} for file in integration.files],
        "setup_commands": integration.setup_commands,
        "enabled": integration.enabled,
        "created_at": integration.created_at,
        "updated_at": integration.updated_at,
    }


def custom_to_domain(row: Any) -> CustomIntegration:
    return CustomIntegration(
        id=row.id,
        organization_id=row.organization_id,
        name=row.name,
        description=row.description,
        env_vars=dict(row.env_vars),
        secret_names=list(row.secret_names),
        files=[IntegrationFile(file["path"], file["content"], int(file["mode"])) for file in row.files],
        setup_commands=list(row.setup_commands),
        enabled=bool(row.enabled),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _many(table: sa.Table, organization_id: str, ids: Sequence[str]) -> sa.Select[Any]:
    return sa.select(table).where(table.c.organization_id == organization_id, table.c.id.in_(list(set(ids))))


class SqlIntegrationRepository(SqlRepository[Integration]):
    table = integrations
    to_row = staticmethod(integration_to_row)
    to_domain = staticmethod(integration_to_domain)
    noun = "integration"

    async def get_many(self, organization_id: str, integration_ids: Sequence[str]) -> list[Integration]:
        if not integration_ids:
            return []
        return [
            self._saw(row) for row in await self.connection.execute(_many(self.table, organization_id, integration_ids))
        ]

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Integration]:
        return await self._sealed_elsewhere(self.table.c.key_id, key_id, limit, self.table.c.sealed.is_not(None))


class SqlCustomIntegrationRepository(SqlRepository[CustomIntegration]):
    table = custom_integrations
    to_row = staticmethod(custom_to_row)
    to_domain = staticmethod(custom_to_domain)
    noun = "custom integration"

    async def get_many(self, organization_id: str, integration_ids: Sequence[str]) -> list[CustomIntegration]:
        if not integration_ids:
            return []
        return [
            self._saw(row) for row in await self.connection.execute(_many(self.table, organization_id, integration_ids))
        ]
