"""The database health probe."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import sqlalchemy as sa

from controlplane_adapters.sql.engine import READ_ONLY, in_admin_thread

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger(__name__)


class SqlHealthProbe:
    """Answers whether the database executes a trivial query (on a SQLite server's synchronous engine, in its
    thread for such work, `in_admin_thread`: never on the event loop)."""

    def __init__(self, engine: AsyncEngine | sa.Engine) -> None:
        self._engine = engine

    async def database_ok(self) -> bool:
        engine = self._engine
        try:
            if isinstance(engine, sa.Engine):
                await in_admin_thread(_select_one, engine)
            else:
                async with engine.connect() as connection:
                    # A reader: on SQLite a writer's BEGIN IMMEDIATE here would take the database lock from a driver
                    # thread while the event loop's own writers wait for it without yielding (a stall of up to 30 s).
                    await (await connection.execution_options(**{READ_ONLY: True})).execute(sa.text("SELECT 1"))
        except Exception:  # any failure means "not answering"; the reason is logged
            log.warning("database health check failed", exc_info=True)
            return False
        return True


def _select_one(engine: sa.Engine) -> None:
    with engine.connect() as connection:  # a reader, as above
        connection.execution_options(**{READ_ONLY: True}).execute(sa.text("SELECT 1"))
