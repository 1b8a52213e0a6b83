"""Each kind of column, rendered by SQLite or Postgres (rendered.py), is the JSON msgspec writes for the same
value."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
import sqlalchemy as sa

from controlplane_adapters.sql.columns import Json, UtcDateTime
from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.sql.rendered import postgres_rendered_row, rendered_row

metadata = sa.MetaData()
kinds = sa.Table(
    "kinds",
    metadata,
    sa.Column("name", sa.String(20), nullable=False),
    sa.Column("note", sa.Text(), nullable=True),
    sa.Column("enabled", sa.Boolean(), nullable=True),
    sa.Column("count", sa.BigInteger(), nullable=True),
    sa.Column("settings", Json, nullable=True),
    sa.Column("seen_at", UtcDateTime(), nullable=True),
    sa.Column("label", sa.String(20), nullable=True),  # a second run of text columns
    sa.Column("created_at", UtcDateTime(), nullable=False),
)

ROWS: list[dict[str, Any]] = [
    {"name": 'quo"te\\ \u00e9 \u2028 \x01', "note": None, "enabled": True, "count": 0,
     "settings": {"a": [1, 2.5, None]}, "seen_at": datetime(2026, 1, 1, 12, 0, 0, 14000, tzinfo=UTC), "label": "x",
     "created_at": datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)},
    {"name": "b", "note": "", "enabled": False, "count": -(2**62), "settings": None, "seen_at": None, "label": None,
     "created_at": datetime(2026, 11, 22, 2, 33, 23, 1, tzinfo=UTC)},
    {"name": "c", "note": "n", "enabled": None, "count": None, "settings": [], "seen_at": None, "label": "",
     "created_at": datetime(2026, 11, 22, 2, 33, 23, 999999, tzinfo=UTC)},
]  # fmt: skip


@pytest.mark.parametrize("row", ROWS, ids=["escapes-and-fraction", "zero-fraction-nulls", "empty-values"])
def test_a_rendered_row_is_the_json_msgspec_writes(row: dict[str, Any]) -> None:
    engine = sa.create_engine("sqlite://", json_serializer=lambda value: msgspec.json.encode(value).decode())
    metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(kinds.insert(), row)
        rendered = connection.execute(sa.select(rendered_row(kinds)).select_from(kinds)).scalar_one()
    assert json.loads(rendered) == json.loads(msgspec.json.encode(row))
    assert list(json.loads(rendered)) == [column.name for column in kinds.columns]


async def test_a_row_rendered_by_postgres_is_the_json_msgspec_writes(postgres_url: str) -> None:
    engine = create_engine(postgres_url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(metadata.create_all)
            await connection.execute(kinds.insert(), ROWS)
            query = sa.select(postgres_rendered_row(kinds)).select_from(kinds).order_by(kinds.c.created_at)
            rendered = (await connection.execute(query)).scalars()
            for row, text in zip(ROWS, rendered, strict=True):
                assert json.loads(text) == json.loads(msgspec.json.encode(row))
                assert list(json.loads(text)) == [column.name for column in kinds.columns]
    finally:
        async with engine.begin() as connection:
            await connection.run_sync(metadata.drop_all)
        await engine.dispose()
