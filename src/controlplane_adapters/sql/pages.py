"""Every SQL list's read of a page and its total (`read_page`, `read_page_where`), and where that read runs.

A page of an organization's rows in its list's order, at a shallow offset, costs what the page holds: it is read
from the index of that order. Anything else costs what the organization holds: a deep `offset` reads every row
it skips, a filter (`q`, `name`, a status, a time range, a prefix) may read every row it rejects, and the total
counts up to offset + MAX_COUNTED rows. On SQLite such a read would run in the event loop's thread, holding every
other organization's requests for as long as it takes; it is sent through `execute_within` instead (a worker
thread, one such read of an organization at a time: sql/off_loop.py `off_loop_turn`). On Postgres the server
does the work either way, and `execute_within` without a budget is a plain read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from controlplane_adapters.sql.statements import counted, counted_to, page_of
from controlplane_domain.paging import PageRequest

if TYPE_CHECKING:
    from controlplane_adapters.sql.base import SqlConnection

IN_LOOP_OFFSET = 1_000
"""The deepest offset of an unfiltered page read in the loop's thread (its total then counts at most
IN_LOOP_OFFSET + MAX_COUNTED rows)."""


def in_loop(page: PageRequest, *, filtered: bool) -> bool:
    """Whether a page's read is bounded by the page: unfiltered (no `name`, `q` or other condition than the
    organization) and at most IN_LOOP_OFFSET deep."""
    return not filtered and not page.filters_names and page.offset <= IN_LOOP_OFFSET


async def read_page(
    connection: SqlConnection,
    organization_id: str,
    page: PageRequest,
    count: Any,
    rows: Any,
    parameters: dict[str, Any] | None = None,
    *,
    filtered: bool,
) -> tuple[list[Any], int]:
    """The rows of the `rows` statement and the total the `count` statement counts (both with `parameters`), read
    in the loop when `in_loop` says so, else off it (see the module's docstring)."""
    where = in_loop(page, filtered=filtered)
    ((total, *_),) = await read(connection, organization_id, count, parameters, in_loop=where)
    return await read(connection, organization_id, rows, parameters, in_loop=where), total


async def read(
    connection: SqlConnection, organization_id: str, statement: Any, parameters: Any, *, in_loop: bool
) -> list[Any]:
    """The statement's rows, read in the loop's thread or off it (`execute_within`, in the organization's turn)."""
    if in_loop:
        return list(await connection.execute(statement, parameters))
    return await connection.execute_within(statement, None, parameters, organization_id=organization_id)


async def read_page_where(
    connection: SqlConnection,
    organization_id: str,
    page: PageRequest,
    selected: sa.Table,
    where: Sequence[sa.ColumnElement[bool]],
    order: Sequence[sa.ColumnElement[Any]],
    *,
    source: sa.FromClause | None = None,
) -> tuple[list[Any], int]:
    """A page of `selected`'s rows (from `source`, a join, when given) that `where` keeps (the organization's
    condition first among them) in `order`, and their total: a filtered read (off SQLite's loop)."""
    source = selected if source is None else source
    rows = sa.select(selected).select_from(source).where(*where).order_by(*order).limit(page.limit).offset(page.offset)
    return await read_page(
        connection, organization_id, page, counted(source, *where, offset=page.offset), rows, filtered=True
    )


async def plain_page(
    connection: SqlConnection, organization_id: str, page: PageRequest, table: sa.Table, order: tuple[str, ...]
) -> tuple[list[Any], int]:
    """A page of all the organization's rows of `table` in `order` (its columns; the page's direction), by the
    statements built once per table and direction (`statements.page_of`), and their total."""
    count, rows = page_of(table, order, descending=page.newest_first)
    parameters = {"organization_id": organization_id, "limit": page.limit, "offset": page.offset,
                  "counted": counted_to(page.offset)}  # fmt: skip
    return await read_page(connection, organization_id, page, count, rows, parameters, filtered=False)
