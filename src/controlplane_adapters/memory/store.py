"""An in-memory store with serializable transactions: one unit of work at a time, copy-on-enter."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Self, TypeVar

from controlplane_adapters.areas import AREAS, Area, AreaRepositories
from controlplane_adapters.memory.base import MemoryRepository

T = TypeVar("T")
R = TypeVar("R")


class MemoryTables:
    """The committed state: each area's tables by name (the area's own, `areas.py`), a dict of its objects, made
    empty on first use; entities are frozen, so shallow copies isolate transactions."""

    def __init__(self, tables: dict[str, dict[Any, Any]] | None = None) -> None:
        self.tables: dict[str, dict[Any, Any]] = {} if tables is None else tables

    def __getitem__(self, name: str) -> dict[Any, Any]:
        table = self.tables.get(name)
        if table is None:
            table = self.tables[name] = {}
        return table

    def copy(self) -> MemoryTables:
        return MemoryTables({name: dict(rows) for name, rows in self.tables.items()})


class MemoryStore:
    """Holds the committed tables and the lock that serializes units of work."""

    def __init__(self) -> None:
        self.tables = MemoryTables()
        self.lock = asyncio.Lock()

    def unit_of_work(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self)


class MemoryUnitOfWork(AreaRepositories):
    """Works on a private copy of the tables; commit publishes it, leaving without commit drops it. Its repositories
    are the areas' (`areas.py`), made on first use on the copy."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._work: MemoryTables | None = None

    async def __aenter__(self) -> Self:
        await self._store.lock.acquire()
        self._bind(self._store.tables.copy())
        return self

    def _bind(self, work: MemoryTables) -> None:
        for area in AREAS:  # the repositories of the previous copy go
            self.__dict__.pop(area.name, None)
        self._work = work

    def table(self, name: str) -> dict[Any, Any]:
        """The unit of work's copy of a table (by the area's name for it)."""
        if self._work is None:
            raise RuntimeError("repositories are used inside the unit of work's block")
        return self._work[name]

    def make(self, area: Area[Any, R]) -> R:
        """`area`'s repository on this unit of work's copy (`Area.__get__`); a generic repository appends its
        audited writes' events to the copy's audit log."""
        repository = area.memory(self)
        if isinstance(repository, MemoryRepository):
            repository.audit_log = self.table("audit_events")
        return repository

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._work = None
        self._store.lock.release()

    async def commit(self) -> None:
        if self._work is None:
            raise RuntimeError("commit outside the unit of work")
        self._store.tables = self._work
        self._bind(self._work.copy())

    async def commit_with(self, write: Callable[[], Awaitable[T]]) -> T:
        answer = await write()
        await self.commit()
        return answer


class MemoryHealthProbe:
    """The in-memory store always answers."""

    async def database_ok(self) -> bool:
        return True
