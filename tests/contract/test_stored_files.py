"""The stored files' repository contract on every store (memory, SQLite, Postgres), and the quota's lock."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from controlplane_domain.errors import Conflict
from controlplane_domain.paging import PageRequest
from controlplane_domain.storage.entity import StoredFile, Usage
from tests.contract.conftest import UowFactory

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
PAGE = PageRequest(limit=10, offset=0)


def stored(path: str, org: str = "org-a", *, size: int = 10, at: int = 0) -> StoredFile:
    return StoredFile(
        id=f"{org}:{path}", organization_id=org, path=path, size=size, content_type="text/plain; charset=utf-8",
        sha256="ab" * 32, blob_key=f"ab/{abs(hash((org, path)))}", created_at=T0 + timedelta(seconds=at),
        updated_at=T0 + timedelta(seconds=at),
    )  # fmt: skip


async def add(uow: UowFactory, *files: StoredFile) -> None:
    async with uow() as work:
        for each in files:
            await work.stored_files.add(each)
        await work.commit()


async def test_files_round_trip_by_path_and_are_scoped(uow: UowFactory) -> None:
    mine = stored("reports/2026/q1.pdf", size=2**40)  # sizes past 32 bits
    await add(uow, mine, stored("reports/2026/q1.pdf", "org-b"))
    async with uow() as work:
        assert await work.stored_files.find("org-a", "reports/2026/q1.pdf") == mine
        assert await work.stored_files.find("org-a", "reports/2026/Q1.pdf") is None
        assert await work.stored_files.find("org-c", "reports/2026/q1.pdf") is None


async def test_a_path_is_unique_in_its_organization(uow: UowFactory) -> None:
    await add(uow, stored("a.txt"))
    with pytest.raises(Conflict) as raised:
        await add(uow, replace(stored("a.txt"), id="another"))
    assert raised.value.details == {"field": "path"}


async def test_update_and_delete(uow: UowFactory) -> None:
    first = stored("a.txt")
    await add(uow, first, stored("b.txt"), stored("a.txt", "org-b"))
    changed = replace(first, size=99, sha256="cd" * 32, blob_key="cd/new", content_type="image/png",
                      updated_at=T0 + timedelta(hours=1))  # fmt: skip
    async with uow() as work:
        assert await work.stored_files.find("org-a", "a.txt", for_update=True) == first
        await work.stored_files.update(changed)
        await work.commit()
    async with uow() as work:
        assert await work.stored_files.find("org-a", "a.txt") == changed
        await work.stored_files.delete("org-b", "b.txt")  # another organization's path: nothing
        await work.stored_files.delete("org-a", "a.txt")
        await work.commit()
    async with uow() as work:
        assert await work.stored_files.find("org-a", "a.txt") is None
        assert await work.stored_files.find("org-a", "b.txt") is not None
        assert await work.stored_files.find("org-b", "a.txt") is not None


async def test_pages_are_in_code_point_order_and_filtered_by_prefix(uow: UowFactory) -> None:
    paths = ["b", "a/z", "a/b", "A/x", "a_b", "a%b", "aé", "a/ä", "ab"]
    await add(uow, *(stored(path, at=-index) for index, path in enumerate(paths)), stored("a/b", "org-b"))
    async with uow() as work:
        items, total = await work.stored_files.list_page("org-a", PAGE)
        assert ([item.path for item in items], total) == (sorted(paths), len(paths))
        items, total = await work.stored_files.list_page("org-a", PageRequest(limit=2, offset=1), "a/")
        assert ([item.path for item in items], total) == (["a/z", "a/ä"], 3)
        for prefix in ("a_", "a%", "A", "aé"):  # LIKE's wildcards and case are plain text here
            items, _ = await work.stored_files.list_page("org-a", PAGE, prefix)
            assert [item.path for item in items] == [path for path in sorted(paths) if path.startswith(prefix)]


async def test_usage_counts_the_organization_files_and_bytes(uow: UowFactory) -> None:
    async with uow() as work:
        assert await work.stored_files.usage("org-a") == Usage(0, 0)
    await add(uow, stored("a", size=5), stored("b", size=2**40), stored("c", "org-b", size=7))
    async with uow() as work:
        assert await work.stored_files.usage("org-a") == Usage(2, 5 + 2**40)
        assert await work.stored_files.usage("org-a", lock=True) == Usage(2, 5 + 2**40)


async def test_the_usage_lock_makes_writers_of_one_organization_take_turns(
    uow: UowFactory, request: pytest.FixtureRequest
) -> None:
    """Two writers each read the usage under the lock, then add a file: the second reads after the first's commit,
    so a quota check on those figures sees the first upload."""
    if request.node.callspec.params["uow"] == "sqlite":
        pytest.skip("SQLite's writers run in the loop's thread and hold its write lock: they never interleave")
    seen: list[Usage] = []

    async def writer(path: str) -> None:
        async with uow() as work:
            seen.append(await work.stored_files.usage("org-a", lock=True))
            await asyncio.sleep(0)  # a turn of the loop where the other writer may run
            await work.stored_files.add(stored(path, size=10))
            await work.commit()

    await asyncio.gather(writer("one"), writer("two"))
    assert sorted(seen, key=lambda usage: usage.files) == [Usage(0, 0), Usage(1, 10)]
