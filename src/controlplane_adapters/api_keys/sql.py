"""API keys in SQL: the table, its row mapping, and the repository (found by id alone to authenticate)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, UtcDateTime, id_column, metadata, organization_column
from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.principal import Role

api_keys = sa.Table(
    "api_keys",
    metadata,
    id_column(),
    organization_column(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("role", sa.String(32), nullable=False),
    sa.Column("secret_hash", sa.String(128), nullable=False),
    sa.Column("created_by", sa.String(255), nullable=False),
    sa.Column("created_at", UtcDateTime(), nullable=False),
    sa.Column("expires_at", UtcDateTime(), nullable=True),
    sa.Column("revoked_at", UtcDateTime(), nullable=True),
    # A worker key's bindings: lists of ids, NULL for an unbound key (and every other key).
    sa.Column("environment_ids", Json, nullable=True),
    sa.Column("queue_ids", Json, nullable=True),
    sa.Index("ix_api_keys_org_created", "organization_id", "created_at", "id"),
)


def api_key_to_row(key: ApiKey) -> dict[str, Any]:
    return {
        "id": key.id,
        "organization_id": key.organization_id,
        "name": key.name,
        "role": key.role.value,
        "secret_hash": key.secret_hash,
        "created_by": key.created_by,
        "created_at": key.created_at,
        "expires_at": key.expires_at,
        "revoked_at": key.revoked_at,
        "environment_ids": list(key.environment_ids) or None,
        "queue_ids": list(key.queue_ids) or None,
    }


def api_key_to_domain(row: Any) -> ApiKey:
    return ApiKey(
        id=row.id,
        organization_id=row.organization_id,
        name=row.name,
        role=Role(row.role),
        secret_hash=row.secret_hash,
        created_by=row.created_by,
        created_at=row.created_at,
        expires_at=row.expires_at,
        revoked_at=row.revoked_at,
        environment_ids=tuple(row.environment_ids or ()),
        queue_ids=tuple(row.queue_ids or ()),
    )


class SqlApiKeyRepository(SqlRepository[ApiKey]):
    table = api_keys
    to_row = staticmethod(api_key_to_row)
    to_domain = staticmethod(api_key_to_domain)
    unique_field = "id"
    noun = "api key"

    async def find_for_authentication(self, key_id: str) -> ApiKey | None:
        row = (await self.connection.execute(sa.select(self.table).where(self.table.c.id == key_id))).first()
        return None if row is None else api_key_to_domain(row)
