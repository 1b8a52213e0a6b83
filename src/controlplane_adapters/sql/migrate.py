"""Alembic, driven from code: upgrade to head, check the revision, render offline SQL.

Alembic is imported only when it is needed (an upgrade, the migrations' scripts read): a server whose schema is at
this release's revision (`HEAD`, read with one query) never loads it (docs/benchmarks.md, "Idle memory")."""

from __future__ import annotations

import functools
import io
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy import Connection

from controlplane_adapters.sql.engine import run_on

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).with_name("migrations")
HEAD = "0024"
"""This release's newest revision, as `head_revision()` reads it from the migrations' scripts (a test checks that
they agree): known without loading alembic."""
VERSION_TABLE = "alembic_version"


def alembic_config(url: str | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


@functools.cache
def head_revision() -> str | None:
    """This release's newest revision (read once a process: loading the migrations' scripts is slow, and every
    start of an app paid it twice to learn what cannot change while the process runs)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


@functools.cache
def known_revisions() -> frozenset[str]:
    """Every revision this release's migrations hold (read once a process)."""
    from alembic.script import ScriptDirectory

    return frozenset(script.revision for script in ScriptDirectory.from_config(alembic_config()).walk_revisions())


def _upgrade(connection: Connection) -> None:
    from alembic import command

    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def _current(connection: Connection) -> str | None:
    """The revision alembic's version table names (None: no table, or no row: a database never migrated), read as
    alembic's MigrationContext reads it, without loading alembic."""
    if not sa.inspect(connection).has_table(VERSION_TABLE):
        return None
    versions = connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()  # noqa: S608
    if len(versions) > 1:
        raise RuntimeError(f"the database holds several schema revisions ({', '.join(versions)}): branched history")
    return versions[0] if versions else None


MIGRATION_LOCK_ID = 0x43504D4947  # "CPMIG": nodes starting together migrate one at a time


async def upgrade(engine: AsyncEngine | sa.Engine) -> None:
    """Bring the schema to the newest revision (on Postgres under an advisory lock, so nodes take turns)."""
    await run_on(engine, _upgrade_locked, begin=True)


def _upgrade_locked(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        # no statement timeout here (CONTROLPLANE_DATABASE_STATEMENT_TIMEOUT_MS is for requests): an index built
        # on a large table, or another node's migration holding the lock, takes what it takes
        connection.execute(sa.text("SET LOCAL statement_timeout = 0"))
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": MIGRATION_LOCK_ID})
    _upgrade(connection)


async def current_revision(engine: AsyncEngine | sa.Engine) -> str | None:
    return await run_on(engine, _current)


def offline_sql(url: str) -> str:
    """The SQL an upgrade from nothing to head would run, for a reviewer."""
    from alembic import command

    buffer = io.StringIO()
    config = alembic_config(url)
    config.output_buffer = buffer
    command.upgrade(config, "head", sql=True)
    return buffer.getvalue()
