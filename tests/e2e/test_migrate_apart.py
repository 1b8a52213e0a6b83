"""A first start migrates its store in a process of its own (`schema.migrate_apart`): alembic, loaded only to
migrate, stays out of the server's process (its idle memory: docs/benchmarks.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controlplane_http.schema import migrate_apart, schema_behind

pytestmark = pytest.mark.e2e


async def test_a_store_migrated_apart_is_at_this_releases_revision(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'first.db'}"
    assert await schema_behind(url)  # a new file: no schema yet
    migrate_apart(url)
    assert not await schema_behind(url)


async def test_a_store_that_cannot_be_read_is_left_to_the_start_check(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-directory" / "cp.db"
    assert not await schema_behind(f"sqlite+aiosqlite:///{missing}")  # check_store says why, in the server's words
    migrate_apart(f"sqlite+aiosqlite:///{missing}")  # (a child that fails says nothing: check_store will)
    assert not missing.parent.exists()
