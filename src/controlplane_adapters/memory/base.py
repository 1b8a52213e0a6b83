"""What the memory store's repositories share: a page of sorted rows (the memory side of every list's order and
name filters: `sorted_page`), and the generic repository of an organization-scoped area whose objects have a unique
name (`MemoryRepository`)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Iterable
from datetime import datetime
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from controlplane_domain.audit import audited_writes
from controlplane_domain.audit.entity import AuditEvent
from controlplane_domain.errors import Conflict
from controlplane_domain.paging import PageRequest, counted

T = TypeVar("T")


def sorted_page(items: Iterable[T], key: Callable[[T], tuple[Any, ...]], page: PageRequest) -> tuple[list[T], int]:
    """The page of `items` in `key` order (reversed when the page asks newest first), and how many there are in
    all (paging.counted); with `name` or `q`, of the items whose `name` the page keeps (`PageRequest.keeps_name`,
    as SQL's `listing.names_kept`)."""
    if page.filters_names:
        items = (item for item in items if page.keeps_name(getattr(item, "name")))  # noqa: B009 (any named type)
    ordered = sorted(items, key=key, reverse=page.newest_first)
    return ordered[page.offset : page.offset + page.limit], counted(len(ordered), page)


class Keyed(Protocol):
    """What `MemoryRepository` needs of an object: its id, its organization, when it was created."""

    @property
    def id(self) -> str: ...

    @property
    def organization_id(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...


K = TypeVar("K", bound=Keyed)


class MemoryRepository(Generic[K]):
    """Add, get, update, delete and page the objects of an organization-scoped area, kept in `rows` (the unit of
    work's copy of the area's table, by id); `unique_field` is unique in an organization (Conflict otherwise), or
    in a narrower scope a subclass draws with `same_scope`. Pages are in (created_at, id) order, either way.

    A plain new area subclasses it with its noun, and wires it in `MemoryUnitOfWork` (memory/store.py)::

        class MemoryWidgetRepository(MemoryRepository[Widget]):
            noun = "widget"

    A list with filters is `page_where` with a predicate::

        async def list_page(
            self, organization_id: str, page: PageRequest, *, color: str | None = None
        ) -> tuple[list[Widget], int]:
            return self.page_where(organization_id, page, lambda widget: color in (None, widget.color))
    """

    noun: ClassVar[str] = "object"
    unique_field: ClassVar[str] = "name"
    unique_fields: ClassVar[tuple[str, ...]] = ()
    """Several fields each unique (`unique_field` when empty)."""
    audited: ClassVar[audited_writes.Audited | None] = None
    """How the area's writes read in the audit log (its entity's `audited`); None: not audited."""
    audit_log: dict[str, AuditEvent] | None = None
    """The unit of work's copy of the audit log (the store sets it on every repository it makes)."""

    def __init__(self, rows: dict[str, K]) -> None:
        self.rows = rows

    def _audit(self, event: AuditEvent | None) -> None:
        if event is not None and self.audit_log is not None:
            self.audit_log[event.id] = event

    def same_scope(self, a: K, b: K) -> bool:
        """Whether `a` and `b` (of one organization) must differ in `unique_field`; override to narrow it."""
        return True

    def _check_unique(self, obj: K) -> None:
        for field in self.unique_fields or (self.unique_field,):
            value = getattr(obj, field)
            for other in self.rows.values():
                if (
                    other.organization_id == obj.organization_id
                    and getattr(other, field) == value
                    and other.id != obj.id
                    and self.same_scope(other, obj)
                ):
                    raise Conflict(f"{self.noun} with {field} '{value}' already exists", {"field": field})

    async def add(self, obj: K) -> None:
        self._check_unique(obj)
        self.rows[obj.id] = obj
        if self.audited is not None:
            self._audit(audited_writes.created(self.audited, obj))

    async def get(self, organization_id: str, object_id: str, *, for_update: bool = False) -> K | None:
        obj = self.rows.get(object_id)
        return obj if obj is not None and obj.organization_id == organization_id else None

    async def update(self, obj: K) -> None:
        self._check_unique(obj)
        before = self.rows.get(obj.id)
        self.rows[obj.id] = obj
        if self.audited is not None:
            self._audit(audited_writes.updated(self.audited, before, obj))

    async def delete(self, organization_id: str, object_id: str) -> None:
        if await self.get(organization_id, object_id) is not None:
            del self.rows[object_id]
            if self.audited is not None:
                self._audit(audited_writes.deleted(self.audited, organization_id, object_id))

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[K], int]:
        return self.page_where(organization_id, page)

    async def newest_page(
        self, organization_id: str, page: PageRequest, statuses: Collection[enum.Enum] | None
    ) -> tuple[list[K], int]:
        """A page of the organization's objects, the newest first, whose `status` is one of `statuses` (None: any)."""
        mine = [obj for obj in self.rows.values() if obj.organization_id == organization_id
                and (statuses is None or getattr(obj, "status") in statuses)]  # fmt: skip  # noqa: B009
        ordered = sorted(mine, key=lambda obj: (obj.created_at, obj.id), reverse=True)
        return ordered[page.offset : page.offset + page.limit], counted(len(ordered), page)

    def page_where(
        self, organization_id: str, page: PageRequest, keep: Callable[[K], bool] | None = None
    ) -> tuple[list[K], int]:
        """A page of the organization's objects (those `keep` keeps, when given), in (created_at, id) order (the
        page's `order`), filtered by the page's `name` and `q`."""
        mine = (
            obj for obj in self.rows.values() if obj.organization_id == organization_id and (keep is None or keep(obj))
        )
        return sorted_page(mine, lambda obj: (obj.created_at, obj.id), page)
