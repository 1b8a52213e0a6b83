"""Statements any area's repository may use, each built once (per table, per dialect) and registered as hot
(hot.py): reads and writes by id, pages, inserts and upserts, and joined rows cut per table."""

from __future__ import annotations

import collections
import functools
from collections.abc import Sequence
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from controlplane_adapters.sql.hot import hot
from controlplane_domain.paging import MAX_COUNTED, MAX_OFFSET


@functools.cache
def by_id(table: sa.Table, for_update: bool = False) -> sa.Select[Any]:
    """Built once per table: a statement object keeps its compiled form and cache key between requests.
    `for_update` locks the row (Postgres; SQLite writers hold the database lock already)."""
    where = (table.c.organization_id == sa.bindparam("organization_id"), table.c.id == sa.bindparam("id"))
    query = sa.select(table).where(*where)
    return hot(query.with_for_update() if for_update else query)


@functools.cache
def insert_row(table: sa.Table, *, atomic: bool = False) -> sa.Insert:
    """INSERT of a row; `atomic`: on Postgres a transaction of its own when it is the unit of work's first write
    (one round trip instead of BEGIN, INSERT and COMMIT; see `hot`)."""
    return hot(table.insert(), atomic=atomic)


@functools.cache
def update_by_id(table: sa.Table) -> sa.Update:
    """UPDATE of every column but the keys; the row is named by `where_organization_id` and `where_id`."""
    return hot(
        table.update()
        .where(
            table.c.organization_id == sa.bindparam("where_organization_id"),
            table.c.id == sa.bindparam("where_id"),
        )
        .values({c.name: sa.bindparam(c.name) for c in table.columns if c.name not in ("id", "organization_id")})
    )


@functools.cache
def updatable(table: sa.Table) -> tuple[str, ...]:
    """The columns an update may write: all but the keys."""
    return tuple(c.name for c in table.columns if c.name not in ("id", "organization_id"))


def changed(table: sa.Table, before: dict[str, Any], after: dict[str, Any]) -> tuple[str, ...]:
    """The columns an update may write (all but the keys) whose value differs between two rows."""
    return tuple(name for name in updatable(table) if before[name] != after[name])


@functools.lru_cache(maxsize=512)
def update_columns(table: sa.Table, columns: tuple[str, ...]) -> sa.Update:
    """UPDATE of the given columns only (one statement per table and column set), named like `update_by_id`."""
    where = (table.c.organization_id == sa.bindparam("where_organization_id"), table.c.id == sa.bindparam("where_id"))
    return hot(table.update().where(*where).values({name: sa.bindparam(name) for name in columns}))


def page_of(
    table: sa.Table, order: tuple[str, ...], *, descending: bool = False
) -> tuple[sa.Select[Any], sa.Select[Any]]:
    """(count, rows) statements for one organization's page in `order` (every column descending, or none), built
    once per table and direction (the same objects whether `descending` is given or not)."""
    return _page_in(table, order, descending)


def counted(source: sa.FromClause, *where: sa.ColumnElement[bool], offset: int | None = None) -> Any:
    """The `total` of a list: the rows of `source` that `where` keeps, counted to at most `offset` + MAX_COUNTED
    (paging.MAX_COUNTED: its time no longer grows with the organization's rows past that). Without `offset`, the
    statement takes the parameter `counted` (`counted_to(offset)`). Not cached: `where` is built per request
    (the statements built once, `page_of`'s, are cached there)."""
    to: int | sa.BindParameter[int] = (
        sa.bindparam("counted", type_=sa.Integer) if offset is None else counted_to(offset)
    )
    kept: sa.Select[Any] = sa.select(sa.literal_column("1").label("one")).select_from(source).where(*where).limit(to)
    return sa.select(sa.func.count()).select_from(kept.subquery("counted"))


def counted_to(offset: int) -> int:
    """The most rows a list's total counts at `offset` (a 64-bit integer on every database)."""
    return min(offset, MAX_OFFSET - MAX_COUNTED) + MAX_COUNTED


@functools.cache
def _page_in(table: sa.Table, order: tuple[str, ...], descending: bool) -> tuple[sa.Select[Any], sa.Select[Any]]:
    """`page_of`'s statements (the parameters `organization_id`, `limit`, `offset` and, for the count, `counted`:
    `counted_to(offset)`)."""
    where = table.c.organization_id == sa.bindparam("organization_id")
    count = counted(table, where)
    rows = (
        sa.select(table)
        .where(where)
        .order_by(*(table.c[name].desc() if descending else table.c[name] for name in order))
        .limit(sa.bindparam("limit"))
        .offset(sa.bindparam("offset"))
    )
    return hot(count), hot(rows)


@functools.cache
def insert_new(dialect: str, table: sa.Table, keys: tuple[str, ...]) -> Any:
    """INSERT ... ON CONFLICT (keys) DO NOTHING, built once per dialect and table."""
    insert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)
    return hot(insert.on_conflict_do_nothing(index_elements=list(keys)))


@functools.cache
def upsert(
    dialect: str, table: sa.Table, keys: tuple[str, ...], keep: tuple[str, ...] = (), newer: str | None = None
) -> Any:
    """INSERT ... ON CONFLICT (keys) DO UPDATE every other column from the inserted row, except those to
    `keep` (and, with `newer`, only where the stored row's `newer` column is not later than the inserted
    one's); built once per dialect and table, executed with the row (or a list of rows) as parameters."""
    insert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)
    changes = {c.name: insert.excluded[c.name] for c in table.columns if c.name not in (*keys, *keep)}
    where = None if newer is None else table.c[newer] <= insert.excluded[newer]
    return hot(insert.on_conflict_do_update(index_elements=list(keys), set_=changes, where=where))


@functools.cache
def _row_of(table: sa.Table) -> Any:
    """A row class named like the table's columns, for one table's slice of a joined row."""
    return collections.namedtuple("Row", [column.name for column in table.columns])


def slices(row: Sequence[Any], joined: tuple[sa.Table, ...]) -> list[Any]:
    """A row of several tables' columns (in order) cut into one row per table, or None for a table the outer
    joins did not find."""
    out, start = [], 0
    for width, make in _cuts(joined):
        part = row[start : start + width]
        start += width
        out.append(make(part) if any(value is not None for value in part) else None)
    return out


@functools.cache
def _cuts(joined: tuple[sa.Table, ...]) -> tuple[tuple[int, Any], ...]:
    """Each joined table's width and row maker, worked out once."""
    return tuple((len(table.columns), _row_of(table)._make) for table in joined)


def one_of(column: sa.ColumnElement[Any], name: str, postgres: bool) -> sa.ColumnElement[bool]:
    """`column` is one of the values of the parameter `name` (`values_of` makes it): `= ANY` of an array on
    Postgres, `IN` the values of a JSON array (`json_each`) on SQLite. One plain bind parameter, so that a hot
    statement may hold it (an expanding IN may not) whatever the number of values."""
    if postgres:
        return column == sa.any_(sa.bindparam(name, type_=postgresql.ARRAY(sa.String)))
    each = sa.func.json_each(sa.bindparam(name, type_=sa.String)).table_valued("value")
    return column.in_(sa.select(each.c.value))


def values_of(values: Sequence[str], postgres: bool) -> Any:
    """The parameter of `one_of`."""
    return list(values) if postgres else _JSON.encode(list(values)).decode()


_JSON = msgspec.json.Encoder()
