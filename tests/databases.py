"""Test databases: a SQLite file per test, and one Postgres database per run (created, then dropped)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
import sqlalchemy as sa

from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.sql.schema import metadata

T = TypeVar("T")
POSTGRES_URL = os.environ.get("CONTROLPLANE_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres")


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


async def _admin(statement: str) -> None:
    import asyncpg

    url = sa.make_url(POSTGRES_URL)
    connection = await asyncpg.connect(
        host=url.host, port=url.port or 5432, user=url.username, password=url.password, database=url.database
    )
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def _migrate(url: str) -> None:
    engine = create_engine(url)
    try:
        await migrate.upgrade(engine)
    finally:
        await engine.dispose()


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion on a private loop, even when called from inside a running loop."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


_SQLITE_TEMPLATE: list[Path] = []


def sqlite_database(path: Path) -> str:
    """A SQLite file at `path` already at the newest revision: a copy of one migrated once per test process (a
    migration costs ~0.2 s, a copy well under 1 ms); the server's start-up then finds it up to date."""
    if not _SQLITE_TEMPLATE:
        template = Path(tempfile.mkdtemp(prefix="controlplane-template-")) / "template.db"
        run_sync(_migrate(f"sqlite+aiosqlite:///{template}"))
        _SQLITE_TEMPLATE.append(template)
    shutil.copyfile(_SQLITE_TEMPLATE[0], path)
    return f"sqlite+aiosqlite:///{path}"


def postgres_database() -> Iterator[str]:
    """Create a uniquely named database for this run, migrate it, yield its URL, drop it."""
    name = f"controlplane_test_{uuid.uuid4().hex[:12]}"
    import asyncpg

    try:
        run_sync(_admin(f'CREATE DATABASE "{name}"'))
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        message = f"PostgreSQL is not reachable at {POSTGRES_URL}: {exc!r}"
        if _in_ci():
            pytest.fail(f"{message} (CI=true: the Postgres tests must run)")
        warnings.warn(f"SKIPPING ALL POSTGRES TESTS: {message}", stacklevel=1)
        pytest.skip(f"SKIPPED LOUDLY: {message}")
    url = sa.make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    try:
        run_sync(_migrate(url))
        yield url
    finally:
        run_sync(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def truncate(url: str) -> None:
    """Empty every application table (between tests on the shared Postgres database): one DELETE per table, children
    first, in one implicit transaction. (TRUNCATE of every table costs ~120 ms, even empty ones: a new file for
    each; these DELETEs, of the few rows a test leaves, ~2 ms.)"""
    import asyncpg

    parts = sa.make_url(url)
    connection = await asyncpg.connect(host=parts.host, port=parts.port or 5432, user=parts.username,
                                       password=parts.password, database=parts.database)  # fmt: skip
    try:
        await connection.execute(_EMPTY_EVERY_TABLE)
    finally:
        await connection.close()


_EMPTY_EVERY_TABLE = "; ".join(f'DELETE FROM "{table.name}"' for table in reversed(metadata.sorted_tables))  # noqa: S608 - our own table names


REDIS_URL = os.environ.get("CONTROLPLANE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def redis_url() -> str:
    """The test Redis, or a loud skip (a failure when CI=true)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        message = f"Redis is not reachable at {REDIS_URL}: {exc!r}"
        if _in_ci():
            pytest.fail(f"{message} (CI=true: the Redis tests must run)")
        warnings.warn(f"SKIPPING REDIS TESTS: {message}", stacklevel=1)
        pytest.skip(f"SKIPPED LOUDLY: {message}")
    finally:
        client.close()
    return REDIS_URL
