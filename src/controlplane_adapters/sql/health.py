"""The database health probe."""

from __future__ import annotations

import logging

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.sql.engine import READ_ONLY

log = logging.getLogger(__name__)


class SqlHealthProbe:
    """Answers whether the database executes a trivial query."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def database_ok(self) -> bool:
        try:
            async with self._engine.connect() as connection:
                # A reader: on SQLite a writer's BEGIN IMMEDIATE here would take the database lock from a driver
                # thread while the event loop's own writers wait for it without yielding (a stall of up to 30 s).
                await (await connection.execution_options(**{READ_ONLY: True})).execute(sa.text("SELECT 1"))
        except Exception:  # any failure means "not answering"; the reason is logged
            log.warning("database health check failed", exc_info=True)
            return False
        return True
