"""Storage in SQL: the stored files' table (metadata; the bytes are in the blob store), its mapping, its repository."""

from __future__ import annotations

import zlib

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import owned_table
from controlplane_adapters.sql.pages import read_page_where
from controlplane_adapters.sql.rows import RowMapping
from controlplane_domain.paging import PageRequest
from controlplane_domain.storage.entity import StoredFile, Usage

stored_files = owned_table(
    "stored_files",
    sa.Column("path", sa.String(1024), nullable=False),
    sa.Column("size", sa.BigInteger(), nullable=False),
    sa.Column("content_type", sa.String(255), nullable=False),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("blob_key", sa.String(255), nullable=False),
    unique=("path",),  # also the lists' order and the usage's scan
    paged=False,
)

# Postgres: the transaction-scoped advisory lock a writer takes before the organization's usage (two keys: a fixed
# one for storage, and the organization's CRC-32), so that uploads of one organization pass the quota in turn.
STORAGE_LOCK_CLASS = 0x53544F52  # "STOR"


def _prefix_range(path: sa.ColumnElement[str], prefix: str) -> list[sa.ColumnElement[bool]]:
    """`prefix` <= path < the least string past every path that starts with it (its last character that can
    grow, grown; none: no upper end): a range of the (organization_id, path) index, in SQLite's order of code
    points, where a comparison of substrings reads each of the organization's files on the event loop. (Postgres
    orders by its collation, which a prefix's range does not follow: it compares there, off the loop.)"""
    conditions = [path >= prefix]
    grown = prefix.rstrip(chr(0x10FFFF))
    if grown:
        following = ord(grown[-1]) + 1
        following = 0xE000 if 0xD800 <= following <= 0xDFFF else following  # (no surrogates in UTF-8)
        conditions.append(path < grown[:-1] + chr(following))
    return conditions


STORED_FILE_ROWS = RowMapping(StoredFile, stored_files)


class SqlStoredFileRepository(SqlRepository[StoredFile]):
    rows = STORED_FILE_ROWS
    noun = "file"
    audited = StoredFile.audited
    unique_field = "path"

    async def find(self, organization_id: str, path: str, *, for_update: bool = False) -> StoredFile | None:
        t = stored_files
        statement = sa.select(t).where(t.c.organization_id == organization_id, t.c.path == path)
        if for_update and self.connection.dialect.name == "postgresql":
            statement = statement.with_for_update()
        row = (await self.connection.execute(statement)).first()
        return None if row is None else self._saw(row)

    async def delete(self, organization_id: str, path: str) -> None:
        t = stored_files
        await self.connection.execute(t.delete().where(t.c.organization_id == organization_id, t.c.path == path))

    async def list_page(
        self, organization_id: str, page: PageRequest, prefix: str = ""
    ) -> tuple[list[StoredFile], int]:
        t = stored_files
        where = [t.c.organization_id == organization_id]
        if prefix:  # (not LIKE: SQLite's ignores case)
            where.append(sa.func.substr(t.c.path, 1, len(prefix)) == prefix)
            if self.connection.dialect.name == "sqlite":  # the paths that start so, a range of the path's index
                where.extend(_prefix_range(t.c.path, prefix))
        # Code point order on every store (Postgres's default collation would order by its locale's rules)
        order = t.c.path.collate("C") if self.connection.dialect.name == "postgresql" else t.c.path
        rows, total = await read_page_where(self.connection, organization_id, page, t, where, (order,))
        return [STORED_FILE_ROWS.to_domain(row) for row in rows], total

    async def usage(self, organization_id: str, *, lock: bool = False) -> Usage:
        t = stored_files
        if lock and self.connection.dialect.name == "postgresql":
            key = zlib.crc32(organization_id.encode()) - 2**31  # an int4, as pg_advisory_xact_lock(int4, int4) takes
            await self.connection.execute(sa.select(sa.func.pg_advisory_xact_lock(STORAGE_LOCK_CLASS, key)))
        # (SQLite: a writer holds the database's write lock from its first statement, BEGIN IMMEDIATE.)
        statement = sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(t.c.size), 0)).where(
            t.c.organization_id == organization_id
        )
        files, used = (await self.connection.execute(statement)).one()
        return Usage(files=int(files), bytes_used=int(used))
