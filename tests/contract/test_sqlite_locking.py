"""SQLite: only writers take the database lock. A reader that took it would hold it while waiting for the event
loop, whose own writers then wait for it in SQLite's busy handler (up to 30 s) without yielding: a stall."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.database import SqlHealthProbe, create_engine


async def test_the_health_probe_takes_no_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "probe.db"
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    await migrate.upgrade(engine)
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # another writer holds the lock for as long as it likes
        assert await asyncio.wait_for(SqlHealthProbe(engine).database_ok(), timeout=5)
    finally:
        writer.rollback()
        writer.close()
        await engine.dispose()
