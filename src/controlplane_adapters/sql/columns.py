"""What every area's table shares: the one `metadata` (schema.py registers every table on it), the column types
(`UtcDateTime`, `Json`), the helpers of the usual columns (`id_column`, `organization_column`, `timestamps`) and of
an organization's table (`owned_table`), and the conversion of JSON columns' values. Each area declares its table in
its own folder (`agents/sql.py`, ...)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect

from controlplane_domain.config import ExecutionEnvironment

T = TypeVar("T")

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

Json = sa.JSON().with_variant(JSONB(), "postgresql")


class UtcDateTime(sa.TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite hands back naive values)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime")
        return value.astimezone(UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any] | None:
        if dialect.name == "sqlite":
            return _sqlite_stored  # one step instead of the decorator's, then SQLAlchemy's %-format of a dict
        return super().bind_processor(dialect)

    def result_processor(self, dialect: Dialect, coltype: Any) -> Callable[[Any], datetime | None] | None:
        if dialect.name == "sqlite":
            return _sqlite_utc  # one step instead of SQLAlchemy's regular expression, then the decorator's
        return super().result_processor(dialect, coltype)


_SQLITE_STORED = "%04d-%02d-%02d %02d:%02d:%02d.%06d"  # SQLAlchemy's DATETIME storage format, by position
_last_stored: tuple[datetime | None, str] = (None, "")  # the last value converted, and its text


def _sqlite_stored(value: datetime | None) -> str | None:
    """An aware datetime in SQLite's stored form, as SQLAlchemy's DATETIME writes it after `process_bind_param`
    ('2026-03-01 12:00:00.123456', UTC, microseconds always; tests/contract/test_sqlite_datetimes.py).

    The same datetime object is usually written several times in a row (a change's `updated_at`, the timestamp
    of its new status and its events' `created_at` are one `now`): the last conversion is kept, by identity (a
    datetime never changes), as one tuple that a reader takes whole."""
    global _last_stored
    if value is None:
        return None
    last = _last_stored
    if last[0] is value:
        return last[1]
    if value.tzinfo is None:
        raise ValueError("naive datetime")
    v = value if value.tzinfo is UTC else value.astimezone(UTC)
    text = _SQLITE_STORED % (v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond)
    _last_stored = (value, text)
    return text


def _sqlite_utc(value: str | None) -> datetime | None:
    """SQLite's stored form ('2026-03-01 12:00:00.123456', always UTC) as an aware datetime (parsing the offset
    costs a fifth of `replace(tzinfo=...)`)."""
    return None if value is None else datetime.fromisoformat(value + "+00:00")


def id_column() -> sa.Column[str]:
    return sa.Column("id", sa.String(64), primary_key=True)


def organization_column() -> sa.Column[str]:
    return sa.Column("organization_id", sa.String(255), nullable=False)


def timestamps() -> tuple[sa.Column[datetime], sa.Column[datetime]]:
    return (
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
    )


def owned_table(
    name: str,
    *items: sa.Column[Any] | sa.Constraint | sa.Index,
    unique: tuple[str | tuple[str, ...], ...] = (),
    stamped: bool = True,
    paged: bool = True,
) -> sa.Table:
    """An organization's table keyed by `id`: `id`, `organization_id`, the columns of `items`, then `created_at`
    and `updated_at` (`stamped`; else `items` place their own); each field (or fields) of `unique` unique in the
    organization; the index of its pages (organization_id, created_at, id) if `paged`; then the constraints and
    indexes of `items`."""
    columns = [item for item in items if isinstance(item, sa.Column)]
    others = [item for item in items if not isinstance(item, sa.Column)]
    return sa.Table(
        name,
        metadata,
        id_column(),
        organization_column(),
        *columns,
        *(timestamps() if stamped else ()),
        *(sa.UniqueConstraint("organization_id", *((f,) if isinstance(f, str) else f)) for f in unique),
        *((sa.Index(f"ix_{name}_org_created", "organization_id", "created_at", "id"),) if paged else ()),
        *others,
    )


def events_table(name: str, parent: str, *items: sa.Column[Any]) -> sa.Table:
    """The events of a row: keyed by its id (the column `parent`) and their sequence number, each of its
    organization, with a type, JSON data, the columns of `items` and its time."""
    return sa.Table(
        name,
        metadata,
        sa.Column(parent, sa.String(64), primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True),
        organization_column(),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("data", Json, nullable=False),
        *items,
        sa.Column("created_at", UtcDateTime(), nullable=False),
    )


def to_json(value: Any) -> Any:
    """Dataclasses, enums and containers as JSON-ready builtins."""
    return msgspec.to_builtins(value)


def from_json(value: Any, kind: type[T]) -> T:
    return msgspec.convert(value, kind)


def execution_environment(value: Any) -> ExecutionEnvironment | None:
    """An agent's or a team's `execution_environment` column as the domain's value."""
    return None if value is None else from_json(value, ExecutionEnvironment)
