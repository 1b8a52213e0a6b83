"""A first start migrates its store in a process of its own (`schema.migrate_apart`, run by `check_store`):
alembic, loaded only to migrate, stays out of the server's process (its idle memory: docs/benchmarks.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controlplane_adapters.settings.model import Settings, StartupFailed
from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.engine import create_sqlite_engine
from controlplane_http.schema import check_store, migrate_apart

pytestmark = pytest.mark.e2e


async def revision(url: str) -> str | None:
    engine = create_sqlite_engine(url)
    try:
        return await migrate.current_revision(engine)
    finally:
        engine.dispose()


async def test_a_store_migrated_apart_is_at_this_releases_revision(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'first.db'}"
    migrate_apart(url)
    assert await revision(url) == migrate.HEAD


async def test_a_first_start_check_leaves_the_store_at_this_releases_revision(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'first.db'}"
    assert await check_store(Settings(database_url=url)) is False  # (no key stored yet)
    assert await revision(url) == migrate.HEAD


async def test_a_store_the_child_cannot_migrate_is_explained_by_the_start_check(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-directory" / "cp.db"
    url = f"sqlite+aiosqlite:///{missing}"
    migrate_apart(url)  # (a child that fails says nothing: the start's check does)
    assert not missing.parent.exists()
    with pytest.raises(StartupFailed, match="is not a directory"):
        await check_store(Settings(database_url=url))
