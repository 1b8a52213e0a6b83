"""Idempotency records in SQL: the table, its row mapping, and the repository (expired records deleted in
batches)."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from controlplane_adapters.sql.base import SqlConnection
from controlplane_adapters.sql.columns import UtcDateTime, metadata
from controlplane_adapters.sql.rows import RowMapping
from controlplane_adapters.sql.statements import upsert
from controlplane_domain.errors import Conflict
from controlplane_domain.idempotency.entity import IdempotencyRecord

idempotency_records = sa.Table(
    "idempotency_records",
    metadata,
    sa.Column("organization_id", sa.String(255), primary_key=True),
    sa.Column("key", sa.String(255), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("status_code", sa.Integer(), nullable=True),
    sa.Column("content_type", sa.String(255), nullable=True),
    sa.Column("body", sa.LargeBinary(), nullable=True),
    sa.Column("created_at", UtcDateTime(), nullable=False),
    sa.Column("expires_at", UtcDateTime(), nullable=False),
    sa.Index("ix_idempotency_records_expires", "expires_at"),
)


RECORD_ROWS = RowMapping(IdempotencyRecord, idempotency_records)


class SqlIdempotencyRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection

    def _where(self, organization_id: str, key: str) -> tuple[sa.ColumnElement[bool], ...]:
        t = idempotency_records
        return (t.c.organization_id == organization_id, t.c.key == key)

    async def get(self, organization_id: str, key: str) -> IdempotencyRecord | None:
        t = idempotency_records
        row = (await self.connection.execute(sa.select(t).where(*self._where(organization_id, key)))).first()
        return None if row is None else RECORD_ROWS.to_domain(row)

    async def add(self, record: IdempotencyRecord) -> None:
        try:
            await self.connection.execute(idempotency_records.insert().values(**RECORD_ROWS.to_row(record)))
        except IntegrityError as exc:
            raise Conflict("idempotency key in use") from exc

    async def save(self, record: IdempotencyRecord) -> None:
        statement = upsert(self.connection.dialect.name, idempotency_records, ("organization_id", "key"))
        await self.connection.execute(statement, RECORD_ROWS.to_row(record))

    async def delete(self, organization_id: str, key: str) -> None:
        await self.connection.execute(idempotency_records.delete().where(*self._where(organization_id, key)))

    async def delete_expired(self, now: datetime, limit: int) -> int:
        t = idempotency_records
        expired = (  # by its index; rows another node is deleting are skipped, not waited for (nor deadlocked on)
            sa.select(t.c.organization_id, t.c.key)
            .where(t.c.expires_at <= now)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        result = await self.connection.execute(t.delete().where(sa.tuple_(t.c.organization_id, t.c.key).in_(expired)))
        return int(result.rowcount)
