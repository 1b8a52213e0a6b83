"""The adapters' one line an area (`controlplane_adapters/areas.py`): it serves every repository the domain's unit of
work names, in both stores, and gives the schema every table once."""

from __future__ import annotations

import inspect

from controlplane_adapters.areas import AREAS, TABLES
from controlplane_adapters.memory.store import MemoryStore
from controlplane_adapters.sql.columns import metadata
from controlplane_domain.ports import UnitOfWork


def test_every_repository_of_the_unit_of_work_is_an_area_line() -> None:
    named = {name for name, member in inspect.getmembers(UnitOfWork) if isinstance(member, property)}
    assert named == {area.name for area in AREAS}


def test_the_areas_tables_are_the_whole_schema_each_once() -> None:
    assert len(TABLES) == len(set(TABLES))
    assert {table.name for table in TABLES} == set(metadata.tables)


async def test_a_memory_unit_of_work_makes_each_repository_once_and_anew_after_commit() -> None:
    store = MemoryStore()
    async with store.unit_of_work() as uow:
        agents = uow.agents
        assert uow.agents is agents
        assert uow.teams is uow.teams
        await uow.commit()
        assert uow.agents is not agents  # made on the published state's next copy
