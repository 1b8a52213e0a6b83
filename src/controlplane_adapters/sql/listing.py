"""The SQL side of every list's order and name filters (`PageRequest.order`, `name`, `q`); the memory side is
`memory.base.sorted_page`, and both follow `PageRequest.keeps_name`."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from controlplane_domain.paging import PageRequest, fold_ascii

_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = "abcdefghijklmnopqrstuvwxyz"


def ordered(page: PageRequest, *columns: sa.ColumnElement[Any]) -> list[sa.ColumnElement[Any]]:
    """`columns` (the list's key, as (created_at, id)) in the page's direction, every one of them alike, so that
    ties on the first are broken by the next the same way on every page."""
    return [column.desc() for column in columns] if page.newest_first else list(columns)


def contains_pattern(q: str) -> str:
    """A LIKE pattern (escape character `\\`) for the names that hold `q` as typed: its LIKE wildcards (`%`, `_`)
    and the escape itself are plain characters; ASCII letters in lowercase (the names are compared folded)."""
    escaped = fold_ascii(q).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def names_kept(column: sa.ColumnElement[str], page: PageRequest, dialect: str) -> list[sa.ColumnElement[bool]]:
    """The conditions on a name `column` of the page's `name` (equal) and `q` (holds it, ASCII letters in any
    case, any other character exactly): SQLite's LIKE folds ASCII letters only, Postgres's LIKE folds none, so
    its side folds the column's ASCII letters with translate() (not lower(), which follows the database's locale)."""
    conditions: list[sa.ColumnElement[bool]] = []
    if page.name is not None:
        conditions.append(column == page.name)
    if page.q is not None:
        folded = sa.func.translate(column, _UPPER, _LOWER) if dialect == "postgresql" else column
        conditions.append(folded.like(contains_pattern(page.q), escape="\\"))
    return conditions
