"""Rows rendered as JSON by the database itself (SQLite, Postgres): a read model for pages of a list.

A page of agents cost the server more Python to build (sqlite3 making a value a column, the type processors,
a domain object and a wire object a row, then encoding them) than SQLite took to find the rows
(docs/benchmarks.md). `rendered_row(table)` is one SQL expression that turns a row into the JSON object a client sees,
keyed by column name, in table order:

- text: `json_object` of each run of text columns (strings, or `null`);
- JSON columns: the stored text itself (written compact by msgspec, so it is already the JSON of the value);
- timestamps: RFC 3339 in UTC as msgspec writes them (`2026-11-22T02:33:23.014000Z`; no fraction when the
  microseconds are zero), from SQLite's stored form (`2026-11-22 02:33:23.014000`, always UTC);
- integers and booleans as JSON numbers and `true`/`false`.

It is only right where the wire type of a row is its columns, in order, with the same JSON. The HTTP layer
checks the names and their order before using it; `tests/http/test_rendered_pages.py` holds a page's items to
what a get of each answers on random rows, and `tests/contract/test_rendered_rows.py` each kind of column to
what msgspec writes. A JSON column's stored text is emitted as stored: a field added later to the
type of a structured JSON column must be backfilled by the migration that adds it.

Postgres renders with `postgres_rendered_row` (end of this module), and a page is one statement that returns
the whole array and the total: in-process, the server's part of a page of 20 fell from about the cost of
three gets to that of one (docs/benchmarks.md, ninth round).
"""

from __future__ import annotations

import functools
import json
import sqlite3

import sqlalchemy as sa

from controlplane_adapters.sql.columns import UtcDateTime


@functools.cache
def sqlite_can_render() -> bool:
    """Whether this process's SQLite has what `rendered_row` uses (`json_object` is in the JSON1 extension,
    built in by default only since SQLite 3.38)."""
    try:
        with sqlite3.connect(":memory:") as connection:
            connection.execute("SELECT rtrim(json_object('a', 'b'), '}'), printf('%s', 1)").fetchall()
    except sqlite3.Error:
        return False
    return True


def _timestamp(column: str) -> str:
    # '2026-11-22 02:33:23.014000' -> "2026-11-22T02:33:23.014000Z"; '... 02:33:23.000000' -> "...T02:33:23Z"
    return f"coalesce('\"' || replace(replace({column}, ' ', 'T') || 'Z', '.000000Z', 'Z') || '\"', 'null')"


def _kind(column: sa.Column[object]) -> str:
    kind = column.type
    if isinstance(kind, UtcDateTime):
        return "timestamp"
    if isinstance(kind, sa.JSON) or isinstance(getattr(kind, "impl", None), sa.JSON):
        return "json"
    if isinstance(kind, sa.Boolean):
        return "boolean"
    if isinstance(kind, sa.Integer):
        return "integer"
    if isinstance(kind, sa.String):
        return "text"
    raise TypeError(f"no JSON rendering for column {column.name} ({kind})")


def _value(kind: str, name: str) -> str:
    if kind == "timestamp":
        return _timestamp(name)
    if kind == "json":
        return f"coalesce({name}, 'null')"
    if kind == "boolean":
        return f"CASE WHEN {name} IS NULL THEN 'null' WHEN {name} THEN 'true' ELSE 'false' END"
    return f"coalesce(CAST({name} AS TEXT), 'null')"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@functools.cache
def rendered_row(table: sa.Table) -> sa.ColumnElement[str]:
    """The SQLite expression of a row of `table` as a JSON object (see the module's docstring).

    One `printf` assembles the object; each run of text columns is one `json_object` call (its closing brace
    trimmed, and its opening one after the first run); a timestamp that cannot be NULL is printed in pieces.
    The cheapest of the forms measured: `||` concatenation, and a `json_quote` a column with a CASE a
    timestamp, cost more (docs/benchmarks.md, "Rows rendered by the database")."""
    formats: list[str] = []
    arguments: list[str | None] = []
    runs: list[list[sa.Column[object]]] = []
    for column in table.columns:
        kind = _kind(column)
        if kind == "text":
            if arguments and arguments[-1] is None:
                runs[-1].append(column)
            else:
                runs.append([column])
                formats.append("%s" if not formats else ",%s")
                arguments.append(None)  # the run's place, filled in below
            continue
        key = ("{" if not formats else ",") + json.dumps(column.name).replace("%", "%%") + ":"
        name = f'"{column.name}"'
        if kind == "timestamp" and not column.nullable:  # date, 'T', the time without '.000000', 'Z'
            formats.append(key + '"%.10sT%sZ"')
            arguments.append(name)
            arguments.append(
                f"CASE WHEN substr({name}, 21) = '000000' THEN substr({name}, 12, 8) ELSE substr({name}, 12) END"
            )
            continue
        formats.append(key + "%s")
        arguments.append(_value(kind, name))  # never NULL: printf would print nothing
    filled = iter(runs)
    for position, argument in enumerate(arguments):
        if argument is not None:
            continue
        pairs = ", ".join(f'{_literal(column.name)}, "{column.name}"' for column in next(filled))
        trimmed = f"rtrim(json_object({pairs}), '}}')"  # a run ends with a string or null, never a brace
        arguments[position] = trimmed if position == 0 else f"substr({trimmed}, 2)"
    expression = f"printf({_literal(''.join(formats) + '}')}, {', '.join(str(a) for a in arguments)})"
    return sa.literal_column(expression, sa.Text).label("rendered")


# Postgres: the same objects, rendered with `to_json` (text), the jsonb value's own text and `to_char`. jsonb
# prints `{"a": 1}` with a space after each separator; a get reads the same jsonb text and msgspec writes it
# compact: the same JSON value (jsonb normalised it once, on the way in: key order, numbers), other bytes.
_PG_TIMESTAMP = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'


def _pg_value(kind: str, name: str) -> str:
    if kind == "text":
        return f"to_json({name})::text"
    if kind == "json":
        return f"{name}::text"
    if kind == "timestamp":  # no fraction when the microseconds are zero, as msgspec writes it
        text = f"to_char({name} AT TIME ZONE 'UTC', {_literal(_PG_TIMESTAMP)})"
        return f"'\"' || replace({text}, '.000000Z', 'Z') || '\"'"
    if kind == "boolean":
        return f"CASE WHEN {name} THEN 'true' WHEN NOT {name} THEN 'false' END"
    return f"{name}::text"


@functools.cache
def postgres_rendered_row(table: sa.Table) -> sa.ColumnElement[str]:
    """The Postgres expression of a row of `table` as a JSON object, keyed by column name in table order, over
    the row's unqualified column names (use it in a query whose FROM is the table or a subquery of its rows)."""
    return sa.literal_column(postgres_rendered_sql(table), sa.Text)


@functools.cache
def postgres_rendered_sql(table: sa.Table) -> str:
    """`postgres_rendered_row`'s SQL text."""
    pieces = []
    for position, column in enumerate(table.columns):
        key = ("{" if position == 0 else ",") + json.dumps(column.name) + ":"
        value = _pg_value(_kind(column), f'"{column.name}"')
        pieces.append(_literal(key))
        pieces.append(f"coalesce({value}, 'null')" if column.nullable else value)
    pieces.append("'}'")
    return " || ".join(pieces)
