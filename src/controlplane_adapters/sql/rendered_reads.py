"""The rendered reads (rendered.py) of a repository that opts into them: `RenderedReads`.

A get of one row and a page of rows as the JSON the database renders of them, for an HTTP controller whose wire
type is the row (`controlplane_http.handlers.rendered_item`, `rendered_list`: the agents' today). A repository
opts in by listing the mixin before its base, `class SqlAgentRepository(RenderedReads, SqlRepository[Agent])`;
one that does not is never asked (the HTTP layer takes the domain path)."""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from controlplane_adapters.sql.base import SqlConnection
from controlplane_adapters.sql.coalesced import coalesced, coalescing
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.pages import IN_LOOP_OFFSET, read
from controlplane_adapters.sql.rendered import postgres_rendered_sql, rendered_row
from controlplane_adapters.sql.statements import counted, counted_to, page_of
from controlplane_domain.paging import MAX_COUNTED, MAX_OFFSET, PageRequest


@functools.cache
def _column_names(table: sa.Table) -> tuple[str, ...]:
    return tuple(column.name for column in table.columns)


def _rendered_page_of(table: sa.Table, descending: bool = False) -> sa.Select[Any]:
    """One organization's page of rows rendered as JSON objects by SQLite (see rendered.py), each with the
    organization's total (one statement, one snapshot), built once a direction (one object however it is asked
    for: the coalescer of its reads is found by it)."""
    return _rendered_page_in(table, descending)


def _rendered_page(table: sa.Table, descending: bool, *with_rows: Any) -> sa.Select[Any]:
    """One organization's page of rows rendered as JSON objects by SQLite, each with `with_rows` (not yet `hot`)."""
    order = (table.c.created_at.desc(), table.c.id.desc()) if descending else (table.c.created_at, table.c.id)
    return (
        sa.select(rendered_row(table), *with_rows)
        .select_from(table)
        .where(table.c.organization_id == sa.bindparam("organization_id"))
        .order_by(*order)
        .limit(sa.bindparam("limit"))
        .offset(sa.bindparam("offset"))
    )


@functools.cache
def _rendered_page_in(table: sa.Table, descending: bool) -> sa.Select[Any]:
    total = counted(table, table.c.organization_id == sa.bindparam("organization_id")).scalar_subquery()
    return hot(_rendered_page(table, descending, total))


@functools.cache
def _rendered_rows_in(table: sa.Table, descending: bool) -> sa.Select[Any]:
    """`_rendered_page_in`'s rows without their total: the pages of a turn that share one count (`_sqlite_turn`)."""
    return hot(_rendered_page(table, descending))


@functools.cache
def _rendered_by_id(table: sa.Table) -> sa.Select[Any]:
    """One row of an organization rendered as its JSON object by SQLite (see rendered.py), built once."""
    where = (table.c.organization_id == sa.bindparam("organization_id"), table.c.id == sa.bindparam("id"))
    return hot(sa.select(rendered_row(table)).where(*where))


def _postgres_rendered_pages_of(table: sa.Table, descending: bool = False) -> sa.TextualSelect:
    """`_postgres_rendered_pages_in` (one object a table and direction, however it is asked for)."""
    return _postgres_rendered_pages_in(table, descending)


@functools.cache
def _postgres_rendered_pages_in(table: sa.Table, descending: bool) -> sa.TextualSelect:
    """Pages of (organization, limit, offset) keys, each one JSON array rendered by Postgres (rendered.py) and
    the organization's total (counted once an organization), in one statement (one snapshot, one row a key):
    several requests' pages when they are coalesced, a unit of work's own page when not."""
    columns = ", ".join(f'"{column.name}"' for column in table.columns)
    way = " DESC" if descending else ""
    cap = f"LEAST(keys.page_offset, {MAX_OFFSET - MAX_COUNTED}) + {MAX_COUNTED}"  # counted_to(offset)
    # The organization's total is counted once a statement, to its deepest page's cap, and cut at each page's.
    # The names come from the table's declaration, every value is a bound parameter.
    sql = f"""WITH keys AS (
  SELECT * FROM unnest(:organization_ids, :limits, :offsets) AS keys(organization_id, page_limit, page_offset)
), totals AS MATERIALIZED (
  SELECT deepest.organization_id,
    (SELECT count(*) FROM (SELECT 1 FROM {table.name} WHERE {table.name}.organization_id = deepest.organization_id
                           LIMIT deepest.counted) AS counted) AS total
  FROM (SELECT keys.organization_id, max({cap}) AS counted FROM keys GROUP BY keys.organization_id) AS deepest
)
SELECT keys.organization_id, keys.page_limit, keys.page_offset,
  (SELECT concat('[', string_agg({postgres_rendered_sql(table)}, ',' ORDER BY page.created_at{way}, page.id{way}), ']')
   FROM (SELECT {columns} FROM {table.name} WHERE {table.name}.organization_id = keys.organization_id
         ORDER BY {table.name}.created_at{way}, {table.name}.id{way}
         LIMIT keys.page_limit OFFSET keys.page_offset) AS page
  ) AS items,
  LEAST(totals.total, {cap}) AS total
FROM keys JOIN totals ON totals.organization_id = keys.organization_id"""  # noqa: S608
    texts, numbers = postgresql.ARRAY(sa.String), postgresql.ARRAY(sa.BigInteger)  # offsets past 2**31 too
    statement = (
        sa.text(sql)
        .bindparams(
            sa.bindparam("organization_ids", type_=texts),
            sa.bindparam("limits", type_=numbers),
            sa.bindparam("offsets", type_=numbers),
        )
        .columns(
            sa.column("organization_id", sa.String),
            sa.column("page_limit", sa.Integer),
            sa.column("page_offset", sa.Integer),
            sa.column("items", sa.Text),
            sa.column("total", sa.BigInteger),
        )
    )
    return hot(statement)


def _page_key(row: Any) -> Hashable:
    return (row.organization_id, row.page_limit, row.page_offset)


def _sqlite_page_key(row: tuple[Any, ...]) -> Hashable:
    return row[:3]


def _pages(keys: list[Any]) -> dict[str, Any]:
    return {
        "organization_ids": [key[0] for key in keys],
        "limits": [key[1] for key in keys],
        "offsets": [key[2] for key in keys],
    }


class RenderedReads:
    """`rendered_get` and `rendered_page` of a `SqlRepository`'s table (see the module's docstring)."""

    table: ClassVar[sa.Table]
    connection: SqlConnection

    @property
    def rendered_fields(self) -> tuple[str, ...]:
        """The keys of `rendered_page`'s objects, in order: the table's columns."""
        return _column_names(self.table)

    async def rendered_get(self, organization_id: str, object_id: str) -> str | None:
        """`get` as the JSON object SQLite renders of the row (rendered.py); None when it is not found or the store
        renders no single rows (Postgres's gets are coalesced into one statement a turn of the loop instead): a
        read model for the HTTP layer, which takes the domain path then."""
        if self.connection.dialect.name != "sqlite":
            return None
        parameters = {"organization_id": organization_id, "id": object_id}
        row = (await self.connection.execute(_rendered_by_id(self.table), parameters)).first()
        return None if row is None else str(row[0])

    async def rendered_page(self, organization_id: str, page: PageRequest) -> tuple[str, int] | None:
        """`list_page` as a JSON array of objects rendered by the database (SQLite, Postgres; None elsewhere),
        and the total: a read model for the HTTP layer, which uses it where its wire type is the row
        (rendered.py). A page filtered by name is not rendered (None)."""
        if page.filters_names:
            return None
        key = (organization_id, page.limit, page.offset)
        dialect = self.connection.dialect.name
        descending = page.newest_first
        if dialect == "postgresql":
            statement = _postgres_rendered_pages_of(self.table, descending)
            reader = coalescing(self.connection)
            if reader is not None:  # a reader: one statement for this turn's pages of this table
                (row,) = await coalesced(reader, statement, key, _page_key, _pages)
            else:
                (row,) = (await self.connection.execute(statement, _pages([key]))).all()
            return row.items, row.total
        if dialect != "sqlite":
            return None
        pages = coalescing(self.connection, "coalesces_pages")
        if pages is not None:  # a reader: each page asked in this turn rendered once, for all who asked
            read = self._sqlite_pages_newest_first if descending else self._sqlite_pages
            (row,) = await pages.coalesced_read(_rendered_page_of(self.table, descending), key, _sqlite_page_key, read)
            return row[3], row[4]
        return await self._sqlite_page(key, descending)

    async def _sqlite_pages(self, keys: list[Any]) -> list[tuple[Any, ...]]:
        return await self._sqlite_turn(keys, False)

    async def _sqlite_pages_newest_first(self, keys: list[Any]) -> list[tuple[Any, ...]]:
        return await self._sqlite_turn(keys, True)

    async def _sqlite_turn(self, keys: list[Any], descending: bool) -> list[tuple[Any, ...]]:
        """The pages asked in one turn of the loop, each as (key, items, total). The shallow pages of an
        organization share one count, to the deepest one's `counted_to`, read just before them in the loop's
        thread (nothing of this process writes in between: they are one snapshot as one statement is); each total
        is that count cut at its own page's `counted_to`. A deeper page is read off the loop with its own count."""
        shallow = [key for key in keys if key[2] <= IN_LOOP_OFFSET]
        deepest: dict[str, int] = {}
        for organization_id, _, offset in shallow:
            deepest[organization_id] = max(offset, deepest.get(organization_id, 0))
        count, _ = page_of(self.table, ("created_at", "id"))
        totals = {}
        for organization_id, offset in deepest.items():
            parameters = {"organization_id": organization_id, "counted": counted_to(offset)}
            ((totals[organization_id],),) = await self.connection.execute(count, parameters)
        rows = _rendered_rows_in(self.table, descending)
        pages: list[tuple[Any, ...]] = []
        for key in keys:
            organization_id, limit, offset = key
            if offset > IN_LOOP_OFFSET:
                pages.append((*key, *await self._sqlite_page(key, descending)))
                continue
            parameters = {"organization_id": organization_id, "limit": limit, "offset": offset}
            found = await self.connection.execute(rows, parameters)
            items = "[" + ",".join(row[0] for row in found) + "]"
            pages.append((*key, items, min(totals[organization_id], counted_to(offset))))
        return pages

    async def _sqlite_page(self, key: tuple[str, int, int], descending: bool) -> tuple[str, int]:
        organization_id, limit, offset = key
        parameters = {
            "organization_id": organization_id,
            "limit": limit,
            "offset": offset,
            "counted": counted_to(offset),
        }
        shallow = offset <= IN_LOOP_OFFSET  # else the skipped rows are read off the loop (pages.py)
        found = await read(self.connection, organization_id, _rendered_page_of(self.table, descending), parameters,
                           in_loop=shallow)  # fmt: skip
        if not found:  # past the end: the total still counts
            count, _ = page_of(self.table, ("created_at", "id"))
            ((total,),) = await read(self.connection, organization_id, count, parameters, in_loop=shallow)
            return "[]", total
        return "[" + ",".join(row[0] for row in found) + "]", found[0][1]
