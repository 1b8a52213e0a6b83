"""A plain area's SQL repository is a subclass of `SqlRepository` that gives its table and its row mapping, and
knows nothing of the fast path (sql/base.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import id_column, organization_column, timestamps
from controlplane_adapters.sql.engine import create_sqlite_engine
from controlplane_adapters.sql.loop_connection import LoopConnection
from controlplane_adapters.sql.pools import close_idle_connections
from controlplane_domain.errors import Conflict
from controlplane_domain.paging import PageRequest

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
widgets = sa.Table(  # on a metadata of its own: not a table of the schema
    "widgets",
    sa.MetaData(),
    id_column(),
    organization_column(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("color", sa.String(32), nullable=True),
    *timestamps(),
    sa.UniqueConstraint("organization_id", "name"),
)


NAMES = tuple(column.name for column in widgets.columns)


@dataclass(frozen=True)
class Widget:
    id: str
    organization_id: str
    name: str
    color: str | None
    created_at: datetime
    updated_at: datetime


def widget_to_row(widget: Widget) -> dict[str, Any]:
    return {name: getattr(widget, name) for name in NAMES}


def widget_to_domain(row: Any) -> Widget:
    return Widget(**{name: getattr(row, name) for name in NAMES})


class SqlWidgetRepository(SqlRepository[Widget]):
    table = widgets
    to_row = staticmethod(widget_to_row)
    to_domain = staticmethod(widget_to_domain)
    noun = "widget"

    async def list_page(
        self, organization_id: str, page: PageRequest, *, color: str | None = None
    ) -> tuple[list[Widget], int]:
        return await self.list_where(organization_id, page, color=color)


def widget(number: int, color: str | None = None, org: str = "org-a") -> Widget:
    at = T0.replace(second=number)
    return Widget(f"{org}-w{number}", org, f"widget {number}", color, at, at)


async def test_a_plain_subclass_adds_gets_updates_pages_and_deletes(tmp_path: Path) -> None:
    engine = create_sqlite_engine(f"sqlite:///{tmp_path / 'plain.db'}")
    widgets.create(engine)
    connection = LoopConnection(engine, read_only=False)
    try:
        repository = SqlWidgetRepository(connection)
        for each in (widget(1, "red"), widget(2), widget(3, "red"), widget(4, "red", org="org-b")):
            await repository.add(each)
        with pytest.raises(Conflict, match="widget with name 'widget 1' already exists"):
            await repository.add(replace(widget(1), id="another"))

        assert await repository.get("org-a", "org-a-w2") == widget(2)
        assert await repository.get("org-b", "org-a-w2") is None
        blue = replace(widget(2), color="blue", updated_at=T0.replace(minute=1))
        await repository.update(blue)
        assert await repository.get("org-a", "org-a-w2") == blue

        everything = await repository.list_page("org-a", PageRequest(limit=10, offset=0))
        assert everything == ([widget(1, "red"), blue, widget(3, "red")], 3)
        red = await repository.list_page("org-a", PageRequest(limit=1, offset=1), color="red")
        assert red == ([widget(3, "red")], 2)
        await repository.delete("org-a", "org-a-w1")
        assert await repository.get("org-a", "org-a-w1") is None
        await connection.commit()
    finally:
        await connection.close()
        close_idle_connections(engine)
        engine.dispose()
