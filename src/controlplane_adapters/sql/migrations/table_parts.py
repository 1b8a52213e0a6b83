"""The columns, keys and indexes that many migrations' tables share, written once.

Frozen like the migrations that use it: a released migration must emit the same DDL for ever, so a function here is
never changed (a new shape gets a new function), and nothing here reads the application's live tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
"""JSON, stored as JSONB on Postgres."""

PAGE_INDEX_COLUMNS = ["organization_id", "created_at", "id"]
"""An organization's rows in the order its pages list them."""


def id_column() -> sa.Column[str]:
    return sa.Column("id", sa.String(length=64), nullable=False)


def organization_id_column() -> sa.Column[str]:
    return sa.Column("organization_id", sa.String(length=255), nullable=False)


def id_and_organization_columns() -> tuple[sa.Column[str], sa.Column[str]]:
    """`id` then `organization_id`: the first columns of most tables."""
    return id_column(), organization_id_column()


def created_at_column() -> sa.Column[datetime]:
    return sa.Column("created_at", sa.DateTime(timezone=True), nullable=False)


def timestamp_columns() -> tuple[sa.Column[datetime], sa.Column[datetime]]:
    """`created_at` then `updated_at`, both required."""
    return created_at_column(), sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False)


def primary_key(table: str, *columns: str) -> sa.PrimaryKeyConstraint:
    """The primary key `pk_<table>`, on `id` unless other columns are named."""
    return sa.PrimaryKeyConstraint(*(columns or ("id",)), name=op.f(f"pk_{table}"))


def unique_in_organization(table: str, *columns: str) -> sa.UniqueConstraint:
    """`columns` unique within an organization: `uq_<table>_organization_id_<columns>`."""
    return sa.UniqueConstraint(
        "organization_id", *columns, name=op.f(f"uq_{table}_organization_id_{'_'.join(columns)}")
    )


def foreign_key(table: str, column: str, referred: str, *, ondelete: str | None) -> sa.ForeignKeyConstraint:
    """`table.column` refers to `referred.id`: `fk_<table>_<column>_<referred>`."""
    return sa.ForeignKeyConstraint(
        [column], [f"{referred}.id"], name=op.f(f"fk_{table}_{column}_{referred}"), ondelete=ondelete
    )


def page_index(table: str) -> dict[str, list[str]]:
    """The index `ix_<table>_org_created` on PAGE_INDEX_COLUMNS, to pass to `create_indexes`."""
    return {f"ix_{table}_org_created": list(PAGE_INDEX_COLUMNS)}


def create_page_index(table: str) -> None:
    """Create `table`'s page index (`page_index`) alone."""
    create_indexes(table, page_index(table))


def create_indexes(table: str, indexes: Mapping[str, list[str]]) -> None:
    """Plain (not unique) indexes on `table`, name to columns, created in this order."""
    for name, columns in indexes.items():
        op.create_index(name, table, columns, unique=False)


def drop_table(table: str, indexes: Sequence[str] = ()) -> None:
    """Drop the named indexes of `table` in this order, then the table."""
    for name in indexes:
        op.drop_index(name, table_name=table)
    op.drop_table(table)
