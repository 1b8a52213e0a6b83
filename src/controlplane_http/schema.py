"""The store's database schema at start: migrated to this release's revision or checked to be at it, and the
SQLite file checked to be writable, each failure a StartupFailed that says what to do."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

from controlplane_adapters.api_keys.sql import api_keys
from controlplane_adapters.settings.model import MEMORY_URL, Settings, StartupFailed
from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.engine import create_engine, create_sqlite_engine, dispose, run_on

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine


class SchemaOutOfDate(StartupFailed):
    """The database schema is older than this release and auto-migration is off."""


async def prepare_schema(engine: AsyncEngine | sa.Engine, *, auto_migrate: bool) -> None:
    """Bring the schema to this release's revision (`auto_migrate`) or check that it is there. A database that
    cannot be reached, or whose schema a newer release migrated, is a StartupFailed that says so."""
    where = engine.url.render_as_string(hide_password=True)
    try:
        current = await migrate.current_revision(engine)
        if current == migrate.HEAD:  # (at this release's revision: alembic is not even loaded)
            return
        head = migrate.head_revision()
        if current is not None and current not in migrate.known_revisions():
            raise StartupFailed(
                f"database schema is at revision {current}, which this release does not know (its newest is {head}):"
                " a newer release migrated it. Run that release, or restore a backup taken before it ran"
            )
        if auto_migrate:
            if current != head:
                await migrate.upgrade(engine)
            return
    except (OSError, TimeoutError, DBAPIError) as exc:
        reason = exc.orig if isinstance(exc, DBAPIError) else exc
        raise StartupFailed(f"cannot use the database {where} (CONTROLPLANE_DATABASE_URL): {reason}") from exc
    if current != migrate.HEAD:
        raise SchemaOutOfDate(
            f"database schema is at revision {current or 'none'}, this release needs {migrate.HEAD}; "
            "run `controlplane migrate` or unset CONTROLPLANE_AUTO_MIGRATE=false"
        )


async def _behind(engine: AsyncEngine | sa.Engine) -> bool:
    """Whether the store's schema is short of this release's revision (read without alembic: `migrate.HEAD`); False
    when it cannot be read (`prepare_schema` then says why)."""
    try:
        return await migrate.current_revision(engine) != migrate.HEAD
    except Exception:
        return False


def migrate_apart(database_url: str) -> None:
    """Migrate the store in a process of its own (`python -m controlplane_http.schema`, the URL on its standard
    input: never in an argument or the environment, which hold no secret), so that alembic, loaded only to migrate,
    never enters the server's process (its idle memory: docs/benchmarks.md). Whatever it cannot do, `check_store`
    tries again in this process and says why."""
    subprocess.run(  # (this interpreter, this package's module; no shell)
        [sys.executable, "-m", "controlplane_http.schema"],
        input=database_url.encode(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


def _start_engine(database_url: str) -> AsyncEngine | sa.Engine:
    """The engine of the server's start: on SQLite a synchronous one, in its own thread (stores.py)."""
    if sa.make_url(database_url).get_backend_name() == "sqlite":
        return create_sqlite_engine(database_url)
    return create_engine(database_url, pool_size=1)


async def _migrate(database_url: str) -> None:
    engine = _start_engine(database_url)
    try:
        await prepare_schema(engine, auto_migrate=True)
    finally:
        await dispose(engine)


async def check_store(settings: Settings) -> bool:
    """What the server's start-up does to its store, on an engine of its own: the CLI runs it before it starts
    the server (and its processes), so that a store that cannot be used stops it with one clear line. A schema to
    migrate is migrated apart first (`migrate_apart`). Answers whether the store holds any API key (the CLI's
    first-start hint)."""
    if settings.database_url == MEMORY_URL:
        return False
    url = sa.make_url(settings.database_url)
    database = url.database
    if url.get_backend_name() == "sqlite" and database and not database.startswith("file:"):
        _check_writable(Path(database))  # (before a connection: a clearer message than SQLite's)
    engine = _start_engine(settings.database_url)
    try:
        if settings.auto_migrate and await _behind(engine):  # (alembic never enters the server's process)
            await asyncio.to_thread(migrate_apart, settings.database_url)
        await prepare_schema(engine, auto_migrate=settings.auto_migrate)
        return await run_on(engine, _holds_api_key)
    finally:
        await dispose(engine)


def _holds_api_key(connection: sa.Connection) -> bool:
    return bool(connection.scalar(sa.select(sa.exists().where(api_keys.c.revoked_at.is_(None)))))


def _check_writable(given: Path) -> None:
    """A SQLite file the server could read but not write would look healthy and answer every write with 503: the
    file and its directory (where the WAL and its index live: the real file's, when `given` is a link) must be
    writable, and the directory must exist. (A `file:` URI is left to SQLite.)"""
    path = given.resolve()
    if not path.parent.is_dir():
        raise StartupFailed(f"the SQLite database {path} cannot be opened: unable to open database file"
                            f" ({path.parent} is not a directory)")  # fmt: skip
    for place in (path, path.parent):
        if place.exists() and not os.access(place, os.W_OK):
            raise StartupFailed(f"the SQLite database {path} cannot be written: {place} is read-only for this user")


if __name__ == "__main__":  # `migrate_apart`'s process
    asyncio.run(_migrate(sys.stdin.read()))
