"""API keys in SQL: the table, its row mapping, and the repository (found by id alone to authenticate)."""

from __future__ import annotations

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, UtcDateTime, owned_table
from controlplane_adapters.sql.rows import Custom, RowMapping
from controlplane_domain.api_keys.entity import ApiKey

api_keys = owned_table(
    "api_keys",
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
    stamped=False,
)


def _ids_or_null(column: str) -> Custom:
    """Ids stored as a JSON array, none as NULL (a key bound to nothing)."""
    return Custom((column,), lambda ids: {column: list(ids) or None}, lambda row: tuple(getattr(row, column) or ()))


API_KEY_ROWS = RowMapping(
    ApiKey, api_keys, environment_ids=_ids_or_null("environment_ids"), queue_ids=_ids_or_null("queue_ids")
)


class SqlApiKeyRepository(SqlRepository[ApiKey]):
    rows = API_KEY_ROWS
    unique_field = "id"
    noun = "api key"

    async def find_for_authentication(self, key_id: str) -> ApiKey | None:
        row = (await self.connection.execute(sa.select(self.table).where(self.table.c.id == key_id))).first()
        return None if row is None else self.to_domain(row)
