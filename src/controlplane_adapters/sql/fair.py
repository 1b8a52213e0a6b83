"""The due rows of a background round, in turns between organizations (controlplane_domain/fairness.py)."""

from __future__ import annotations

import sqlalchemy as sa


def in_turns(
    table: sa.Table, due: sa.ColumnElement[bool], at: sa.Column[object], *, limit: int, per_organization: int
) -> sa.Select[tuple[object, ...]]:
    """SELECT the rows of `table` matching `due`, ranked within their organization by `at` (then id), at most
    `per_organization` each, ordered by rank, then `at`, then id; the first `limit`. One statement (a window
    function over the due rows: the rows due at once, not the table)."""
    rank = sa.func.row_number().over(partition_by=table.c.organization_id, order_by=(at, table.c.id))
    ranked = sa.select(table, rank.label("turn")).where(due).subquery("due")
    return (
        sa.select(*(ranked.c[column.name] for column in table.c))
        .where(ranked.c.turn <= per_organization)
        .order_by(ranked.c.turn, ranked.c[at.name], ranked.c.id)
        .limit(limit)
    )
