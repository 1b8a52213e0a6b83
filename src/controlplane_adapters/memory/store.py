"""An in-memory store with serializable transactions: one writing unit of work at a time, each on copies of the
tables it uses; readers on the committed tables as they were when they began.

The committed tables are never changed in place: a writer copies a table the first time it uses it (not every
table at its start: a unit of work's cost follows the tables it uses, not the store's size) and its commit
publishes a new set of tables, the copies it made and the others as they were. A reader (`read_unit_of_work`)
copies nothing: it keeps the set committed when it began, a snapshot that no later commit changes, seen through
read-only views (a write there raises, as a write on a SQL reader fails)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType, TracebackType
from typing import Any, Self, TypeVar

from controlplane_adapters.areas import AREAS, Area, AreaRepositories
from controlplane_adapters.memory.base import MemoryRepository

T = TypeVar("T")
R = TypeVar("R")

_NO_ROWS: Mapping[Any, Any] = MappingProxyType({})
_AREA_NAMES = frozenset(area.name for area in AREAS)


class MemoryTables:
    """The committed state: each area's tables by name (the area's own, `areas.py`), a dict of its objects. A set of
    tables, once committed, is never changed (see the module's docstring); entities are frozen, so a copy of a
    table shares its objects."""

    def __init__(self, tables: dict[str, dict[Any, Any]] | None = None) -> None:
        self.tables: dict[str, dict[Any, Any]] = {} if tables is None else tables


class WorkingTables:
    """A writer's tables: each copied from the committed set on first use (an empty one for a table not made yet)."""

    def __init__(self, committed: MemoryTables) -> None:
        self.committed = committed
        self.copied: dict[str, dict[Any, Any]] = {}

    def __getitem__(self, name: str) -> dict[Any, Any]:
        table = self.copied.get(name)
        if table is None:
            table = self.copied[name] = dict(self.committed.tables.get(name, ()))
        return table

    def published(self) -> MemoryTables:
        """The set a commit publishes: the committed tables, with this writer's copies in place of theirs."""
        return MemoryTables({**self.committed.tables, **self.copied})


class MemoryStore:
    """Holds the committed tables and the lock that serializes the writing units of work."""

    def __init__(self) -> None:
        self.tables = MemoryTables()
        self.lock = asyncio.Lock()

    def unit_of_work(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self)

    def read_unit_of_work(self) -> MemoryReadUnitOfWork:
        """A unit of work for reading only (`Ports.read`): no lock, no copy (see the module's docstring)."""
        return MemoryReadUnitOfWork(self)


class MemoryUnitOfWork(AreaRepositories):
    """Works on private copies of the tables it uses; commit publishes them, leaving without commit drops them. Its
    repositories are the areas' (`areas.py`), made on first use on the copies."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._work: WorkingTables | None = None

    async def __aenter__(self) -> Self:
        await self._store.lock.acquire()
        self._bind(WorkingTables(self._store.tables))
        return self

    def _bind(self, work: WorkingTables | None) -> None:
        for name in self.__dict__.keys() & _AREA_NAMES:  # the repositories made on the previous tables go
            del self.__dict__[name]
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
        self._store.tables = self._work.published()
        self._bind(WorkingTables(self._store.tables))

    async def commit_with(self, write: Callable[[], Awaitable[T]]) -> T:
        answer = await write()
        await self.commit()
        return answer


class MemoryReadUnitOfWork(MemoryUnitOfWork):
    """A reader: the tables committed when it began, through read-only views (see the module's docstring)."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__(store)
        self._snapshot: MemoryTables | None = None

    async def __aenter__(self) -> Self:
        self._snapshot = self._store.tables
        self._bind(None)
        return self

    def table(self, name: str) -> dict[Any, Any]:
        if self._snapshot is None:
            raise RuntimeError("repositories are used inside the unit of work's block")
        rows = self._snapshot.tables.get(name)
        # read-only: a repository that writes here raises (TypeError), as a write on a SQL reader fails
        view: Any = _NO_ROWS if rows is None else MappingProxyType(rows)
        return view  # type: ignore[no-any-return]

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._snapshot = None
        self._bind(None)

    async def commit(self) -> None:
        """Nothing to publish: a reader writes nothing."""


class MemoryHealthProbe:
    """The in-memory store always answers."""

    async def database_ok(self) -> bool:
        return True
