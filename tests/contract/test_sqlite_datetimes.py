"""SQLite stores timestamps as text: the service's own writer must store exactly what SQLAlchemy's would.

Stored timestamps are compared and ordered as text (queued_at for the oldest queued execution, created_at for
pages): a writer that stored '2026-03-01 12:00:00' for one row and '2026-03-01 12:00:00.000000' for another
would order them wrongly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.dialects import sqlite

from controlplane_adapters.sql.columns import UtcDateTime

DIALECT = sqlite.dialect()
OFFSETS = st.integers(min_value=-23 * 60, max_value=23 * 60).map(lambda minutes: timezone(timedelta(minutes=minutes)))
AWARE = st.datetimes(
    min_value=datetime(1000, 1, 2), max_value=datetime(9998, 12, 30), timezones=st.one_of(st.just(UTC), OFFSETS)
)


def sqlalchemy_stored(value: datetime) -> str:
    """What SQLAlchemy's own processors make of the value: the decorator's step, then SQLite's DATETIME."""
    utc = UtcDateTime().process_bind_param(value, DIALECT)
    processor = sa.DateTime(timezone=True).dialect_impl(DIALECT).bind_processor(DIALECT)
    assert processor is not None
    stored: str = processor(utc)
    return stored


@given(AWARE)
def test_a_timestamp_is_stored_as_sqlalchemy_stores_it(value: datetime) -> None:
    processor = UtcDateTime().dialect_impl(DIALECT).bind_processor(DIALECT)
    assert processor is not None
    assert processor(value) == sqlalchemy_stored(value)
    # the writer keeps its last conversion: a value written again, then another, then the first once more
    later = value + timedelta(microseconds=1)
    assert [processor(value), processor(later), processor(value)] == [
        sqlalchemy_stored(value),
        sqlalchemy_stored(later),
        sqlalchemy_stored(value),
    ]


@given(AWARE)
def test_a_stored_timestamp_reads_back_as_the_same_instant(value: datetime) -> None:
    kind = UtcDateTime().dialect_impl(DIALECT)
    stored = kind.bind_processor(DIALECT)(value)  # type: ignore[misc]
    read = kind.result_processor(DIALECT, None)(stored)  # type: ignore[misc]
    assert read == value
    assert read.tzinfo is UTC


def test_whole_seconds_keep_their_microseconds_and_short_years_their_digits() -> None:
    processor = UtcDateTime().dialect_impl(DIALECT).bind_processor(DIALECT)
    assert processor is not None
    assert processor(datetime(2026, 3, 1, 12, 0, tzinfo=UTC)) == "2026-03-01 12:00:00.000000"
    assert processor(datetime(999, 1, 2, 3, 4, 5, 6, tzinfo=UTC)) == "0999-01-02 03:04:05.000006"
    assert processor(None) is None


def test_a_naive_timestamp_is_refused() -> None:
    processor = UtcDateTime().dialect_impl(DIALECT).bind_processor(DIALECT)
    assert processor is not None
    with pytest.raises(ValueError, match="naive"):
        processor(datetime(2026, 3, 1, 12, 0))
