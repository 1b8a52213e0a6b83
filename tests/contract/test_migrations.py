"""Alembic migrations produce exactly the schema the SQLAlchemy tables declare, on SQLite and Postgres."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.sql.schema import metadata
from tests.databases import POSTGRES_URL, _admin


@pytest.fixture(params=["sqlite", "postgres"])
async def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'drift.db'}"
        return
    request.getfixturevalue("postgres_url")  # skips (or fails in CI) when there is no Postgres
    name = f"controlplane_drift_{uuid.uuid4().hex[:10]}"
    await _admin(f'CREATE DATABASE "{name}"')
    try:
        yield sa.make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        await _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _differences(connection: sa.Connection) -> list[Any]:
    context = MigrationContext.configure(
        connection,
        opts={"compare_type": True, "compare_server_default": True, "include_object": _made_here(connection)},
    )
    return [diff for diff in compare_metadata(context, metadata) if not _is_alembic_table(diff)]


def _made_here(connection: sa.Connection) -> Any:
    """Leaves out the declared indexes made on another dialect only (`Index(...).ddl_if(dialect=...)`)."""

    def include(obj: Any, name: str | None, kind: str, reflected: bool, compare_to: Any) -> bool:
        only = getattr(obj, "_ddl_if", None) if kind == "index" and not reflected else None
        return only is None or only.dialect in (None, connection.dialect.name)

    return include


def _is_alembic_table(diff: Any) -> bool:
    return isinstance(diff, tuple) and diff[0] == "remove_table" and diff[1].name == "alembic_version"


def _downgrade(connection: sa.Connection) -> None:
    config = migrate.alembic_config()
    config.attributes["connection"] = connection
    command.downgrade(config, "base")


def _tables(connection: sa.Connection) -> set[str]:
    return set(sa.inspect(connection).get_table_names())


async def test_migrations_match_the_declared_tables(empty_database: str) -> None:
    engine = create_engine(empty_database)
    try:
        await migrate.upgrade(engine)
        async with engine.connect() as connection:
            assert await connection.run_sync(_differences) == []
        assert await migrate.current_revision(engine) == migrate.head_revision() == migrate.HEAD
    finally:
        await engine.dispose()


def test_the_head_known_without_alembic_is_the_migrations_head() -> None:
    """A new migration moves `migrate.HEAD` with it: a start at the old constant would upgrade past it every time."""
    assert migrate.head_revision() == migrate.HEAD


async def test_migrations_go_down_and_up_again(empty_database: str) -> None:
    engine = create_engine(empty_database)
    try:
        await migrate.upgrade(engine)
        async with engine.begin() as connection:
            await connection.run_sync(_downgrade)
        async with engine.connect() as connection:
            assert await connection.run_sync(_tables) <= {"alembic_version"}
        assert await migrate.current_revision(engine) is None
        await migrate.upgrade(engine)
        async with engine.connect() as connection:
            assert await connection.run_sync(_tables) >= {table.name for table in metadata.sorted_tables}
    finally:
        await engine.dispose()


def test_a_table_change_without_a_migration_is_drift(tmp_path: Path) -> None:
    """The check itself can fail: a column the migrations do not create shows up as a difference."""
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'sync.db'}")
    with engine.begin() as connection:
        config = migrate.alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
        connection.execute(sa.text("ALTER TABLE agents ADD COLUMN stray INTEGER"))
        differences = _differences(connection)
    assert any(diff[0] == "remove_column" and diff[3].name == "stray" for diff in differences)


async def test_nodes_starting_together_migrate_once(empty_database: str) -> None:
    import asyncio

    engines = [create_engine(empty_database) for _ in range(3)]
    try:
        await asyncio.gather(*(migrate.upgrade(engine) for engine in engines))
        assert await migrate.current_revision(engines[0]) == migrate.head_revision()
    finally:
        for engine in engines:
            await engine.dispose()
