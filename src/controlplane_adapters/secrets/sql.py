"""Secrets in SQL: the secrets table (sealed values, never plaintext), their accesses, the mapping, the repository."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import UtcDateTime, owned_table, timestamps
from controlplane_adapters.sql.listing import ordered
from controlplane_adapters.sql.pages import read_page_where
from controlplane_adapters.sql.rows import RowMapping, sealed
from controlplane_domain.paging import PageRequest
from controlplane_domain.secrets.entity import Secret, SecretAccess

secrets = owned_table(
    "secrets",
    sa.Column("name", sa.String(128), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("version", sa.Integer(), nullable=False),
    sa.Column("key_id", sa.String(16), nullable=False),
    sa.Column("sealed", sa.LargeBinary(), nullable=False),
    *timestamps(),
    sa.Column("last_accessed_at", UtcDateTime(), nullable=True),
    unique=("name",),
    stamped=False,
)

secret_accesses = owned_table(
    "secret_accesses",
    sa.Column("secret_id", sa.String(64), sa.ForeignKey("secrets.id", ondelete="CASCADE"), nullable=False),
    sa.Column("execution_id", sa.String(64), nullable=False),
    sa.Column("worker_id", sa.String(255), nullable=False),
    sa.Column("accessed_at", UtcDateTime(), nullable=False),
    sa.Index("ix_secret_accesses_secret", "secret_id", "accessed_at", "id"),
    stamped=False,
    paged=False,
)


ACCESS_ROWS = RowMapping(SecretAccess, secret_accesses)


class SqlSecretRepository(SqlRepository[Secret]):
    rows = RowMapping(Secret, secrets, sealed=sealed())
    noun = "secret"
    audited = Secret.audited

    async def get_by_names(
        self, organization_id: str, names: Sequence[str], *, for_update: bool = False
    ) -> list[Secret]:
        if not names:
            return []
        query = sa.select(secrets).where(secrets.c.organization_id == organization_id, secrets.c.name.in_(list(names)))
        if for_update and self.connection.dialect.name == "postgresql":
            query = query.order_by(secrets.c.id).with_for_update()  # one lock order everywhere
        return [self._saw(row) for row in await self.connection.execute(query)]

    async def add_accesses(self, accesses: Sequence[SecretAccess]) -> None:
        if accesses:
            rows = [ACCESS_ROWS.to_row(access) for access in accesses]
            await self.connection.execute(secret_accesses.insert(), rows)

    async def access_page(
        self, organization_id: str, secret_id: str, page: PageRequest
    ) -> tuple[list[SecretAccess], int]:
        table = secret_accesses
        where = (table.c.organization_id == organization_id, table.c.secret_id == secret_id)
        order = ordered(page, table.c.accessed_at, table.c.id)
        rows, total = await read_page_where(self.connection, organization_id, page, table, where, order)
        return [ACCESS_ROWS.to_domain(row) for row in rows], total

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Secret]:
        return await self._sealed_elsewhere(secrets.c.key_id, key_id, limit)
