"""Alembic, driven from code: upgrade to head, check the revision, render offline SQL."""

from __future__ import annotations

import functools
import io
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(url: str | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


@functools.cache
def head_revision() -> str | None:
    """This release's newest revision (read once a process: loading the migrations' scripts is slow, and every
    start of an app paid it twice to learn what cannot change while the process runs)."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


@functools.cache
def known_revisions() -> frozenset[str]:
    """Every revision this release's migrations hold (read once a process)."""
    return frozenset(script.revision for script in ScriptDirectory.from_config(alembic_config()).walk_revisions())


def _upgrade(connection: Connection) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def _current(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


MIGRATION_LOCK_ID = 0x43504D4947  # "CPMIG": nodes starting together migrate one at a time


async def upgrade(engine: AsyncEngine) -> None:
    """Bring the schema to the newest revision (on Postgres under an advisory lock, so nodes take turns)."""
    async with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # no statement timeout here (CONTROLPLANE_DATABASE_STATEMENT_TIMEOUT_MS is for requests): an index built
            # on a large table, or another node's migration holding the lock, takes what it takes
            await connection.execute(sa.text("SET LOCAL statement_timeout = 0"))
            await connection.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": MIGRATION_LOCK_ID})
        await connection.run_sync(_upgrade)


async def current_revision(engine: AsyncEngine) -> str | None:
    async with engine.connect() as connection:
        return await connection.run_sync(_current)


def offline_sql(url: str) -> str:
    """The SQL an upgrade from nothing to head would run, for a reviewer."""
    buffer = io.StringIO()
    config = alembic_config(url)
    config.output_buffer = buffer
    command.upgrade(config, "head", sql=True)
    return buffer.getvalue()
