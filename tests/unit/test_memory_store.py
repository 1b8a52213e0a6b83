"""The memory store's units of work: a writer copies the tables it uses and publishes them on commit; a reader copies
nothing and reads the tables committed when it began (controlplane_adapters/memory/store.py)."""

from __future__ import annotations

import pytest

from controlplane_adapters.memory.store import MemoryStore
from controlplane_domain.paging import PageRequest
from tests.contract.test_repositories import agent


async def test_a_reader_reads_what_was_committed_when_it_began() -> None:
    store = MemoryStore()
    async with store.unit_of_work() as uow:
        await uow.agents.add(agent("first"))
        await uow.commit()
    async with store.read_unit_of_work() as reader:
        assert await reader.agents.get("org-a", "org-a-first") is not None
        async with store.unit_of_work() as uow:  # a writer commits while the reader is still reading
            await uow.agents.add(agent("second"))
            await uow.commit()
        assert await reader.agents.get("org-a", "org-a-second") is None
        page, total = await reader.agents.list_page("org-a", PageRequest())
        assert [each.name for each in page] == ["first"]
        assert total == 1
    async with store.read_unit_of_work() as later:
        assert await later.agents.get("org-a", "org-a-second") is not None


async def test_a_reader_cannot_write_and_leaves_the_store_as_it_was() -> None:
    store = MemoryStore()
    async with store.read_unit_of_work() as reader:
        with pytest.raises(TypeError):
            await reader.agents.add(agent("sneaked"))
    async with store.read_unit_of_work() as reader:
        assert await reader.agents.get("org-a", "org-a-sneaked") is None


async def test_a_writer_that_leaves_without_commit_changes_nothing() -> None:
    store = MemoryStore()
    async with store.unit_of_work() as uow:
        await uow.agents.add(agent("kept"))
        await uow.commit()
    async with store.unit_of_work() as uow:
        await uow.agents.delete("org-a", "org-a-kept")
        await uow.agents.add(agent("dropped"))
    async with store.read_unit_of_work() as reader:
        assert await reader.agents.get("org-a", "org-a-kept") is not None
        assert await reader.agents.get("org-a", "org-a-dropped") is None


async def test_a_commit_publishes_new_copies_of_the_tables_it_used_only() -> None:
    """A unit of work's cost follows the tables it uses, not the store's size: the others are not copied."""
    store = MemoryStore()
    async with store.unit_of_work() as uow:
        await uow.agents.add(agent("one"))
        await uow.workers.list_page("org-a", PageRequest())
        await uow.commit()
    before = dict(store.tables.tables)
    async with store.unit_of_work() as uow:
        await uow.workers.list_page("org-a", PageRequest())
        await uow.commit()
    assert store.tables.tables["agents"] is before["agents"]
