"""The generic SQL repository of an organization-owned table keyed by `id`, and what it needs of a connection.

A plain area subclasses `SqlRepository` with its row mapping (derived: rows.py), its noun and its unique field, and
has add, get, update, delete and pages (`list_page`; `list_where` for a page with filters):

    class SqlWidgetRepository(SqlRepository[Widget]):
        rows = RowMapping(Widget, widgets)
        noun = "widget"  # "widget with name 'x' already exists"
        unique_field = "name"  # or unique_fields = ("name", "key"): each unique in the organization

        async def list_page(self, organization_id, page, *, color=None):
            return await self.list_where(organization_id, page, color=color)

It needs nothing of the fast path: its statements are hot (hot.py) already, and a Postgres reader's `get` is
coalesced with the other gets of its turn (coalesced.py). An area whose controller serves rows rendered by the
database opts into `RenderedReads` (rendered_reads.py)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import IntegrityError

from controlplane_adapters.audit.sql import AUDIT_ROWS
from controlplane_adapters.audit.sql import INSERT as AUDIT_INSERT
from controlplane_adapters.sql.coalesced import coalesced_by_id, coalescing
from controlplane_adapters.sql.listing import names_kept, ordered
from controlplane_adapters.sql.pages import plain_page, read_page_where
from controlplane_adapters.sql.rows import RowMapping
from controlplane_adapters.sql.statements import (
    by_id,
    changed,
    insert_row,
    update_by_id,
    update_columns,
)
from controlplane_domain.audit import audited_writes
from controlplane_domain.audit.entity import AuditEvent
from controlplane_domain.errors import Conflict, DomainError
from controlplane_domain.paging import PageRequest

T = TypeVar("T")


class SqlConnection(Protocol):
    """What the repositories need of a connection: an AsyncConnection, or SQLite's loop-thread connection."""

    @property
    def dialect(self) -> Dialect: ...

    async def execute(self, statement: Any, parameters: Any = None) -> Any: ...

    async def execute_within(
        self, statement: Any, milliseconds: int | None, parameters: Any = None, *, organization_id: str
    ) -> list[Any]:
        """The statement's rows, read within `milliseconds` (errors.OverBudget past them; None: the statement
        timeout alone), off the event loop on SQLite, in the organization's turn: a read whose work a tenant's
        data drives (a dense graph's walk, analytics over many executions, a list read past its page)."""
        ...


class SqlRepository(Generic[T]):
    """Add, get, update, delete and page one organization-owned table keyed by `id`.

    A subclass gives `table`, `to_row` and `to_domain` (its row mapping, as static methods), `noun` and
    `unique_field` (what a unique constraint's conflict names); `_missing_reference` says what a write answers
    when the row a foreign key names is gone.

    An update writes only the columns that changed since this unit of work read or wrote the object (all of
    them for an object it never saw). SQLite maintains an index only when the UPDATE assigns one of its
    columns: assigning every column rewrote all seven indexes of the executions table, several times the
    cost of assigning `last_seq` alone. On Postgres a narrow update also leaves alone the columns another
    transaction changed in between (an unlocked read), instead of writing them back stale."""

    table: ClassVar[sa.Table]
    to_row: Callable[[T], dict[str, Any]]
    to_domain: Callable[[Any], T]
    unique_field: ClassVar[str] = "name"
    unique_fields: ClassVar[tuple[str, ...]] = ()
    """Several fields each unique in an organization (`unique_field` when empty); a conflict names the one the
    database's message names (the constraint `uq_<table>_organization_id_<field>`, or SQLite's `<table>.<field>`)."""
    noun: ClassVar[str] = "object"
    audited: ClassVar[audited_writes.Audited | None] = None
    """How the area's writes read in the audit log (its entity's `audited`); None: not audited."""

    rows: ClassVar[RowMapping[Any] | None] = None
    """The derived row mapping (rows.py), which gives `table`, `to_row` and `to_domain`; None: given by hand."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        rows = cls.__dict__.get("rows")
        if rows is not None:
            cls.table = rows.table
            cls.to_row, cls.to_domain = staticmethod(rows.to_row), staticmethod(rows.to_domain)

    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection
        self._seen: dict[str, T] = {}  # id -> the object as this unit of work last read or wrote it

    async def _sealed_elsewhere(
        self, key_column: sa.ColumnElement[Any], key_id: str, limit: int, *where: sa.ColumnElement[bool]
    ) -> list[T]:
        """Rows whose sealed value `key_column` says another key sealed, by id, at most `limit`, locked on Postgres
        (a key rotation's batch: secrets, integrations, webhooks' and jobs' signing secrets)."""
        query = sa.select(self.table).where(key_column.is_not(None), key_column != key_id, *where)
        query = query.order_by(self.table.c.id).limit(limit)
        if self.connection.dialect.name == "postgresql":
            query = query.with_for_update()
        return [self._saw(row) for row in await self.connection.execute(query)]

    def _saw(self, row: Any) -> T:
        obj = type(self).to_domain(row)
        self._seen[row.id] = obj
        return obj

    def _conflict(self, obj: T, exc: IntegrityError) -> DomainError:
        if "foreign key" in str(exc.orig).lower():  # the one the table has; Postgres and SQLite say it alike
            return self._missing_reference(obj)
        message, table = str(exc.orig), self.table.name
        fields = self.unique_fields or (self.unique_field,)
        field = next(
            (
                name
                for name in fields
                if f"{table}.{name}" in message or f"uq_{table}_organization_id_{name}" in message
            ),
            fields[0],
        )
        value = getattr(obj, field)
        return Conflict(f"{self.noun} with {field} '{value}' already exists", {"field": field})

    def _missing_reference(self, obj: T) -> DomainError:
        """What a write answers when the row it names was deleted after the use case checked it (a race)."""
        return Conflict(f"{self.noun} refers to an object that no longer exists")

    async def add(self, obj: T) -> None:
        await self._add(obj, insert_row(self.table))

    async def _audit(self, event: AuditEvent | None) -> None:
        """Append the event of an audited write (written before the change itself, whose statement may be atomic:
        `commit_with` then sends it in this transaction)."""
        if event is not None:
            await self.connection.execute(AUDIT_INSERT, AUDIT_ROWS.to_row(event))

    async def _add(self, obj: T, insert: sa.Insert) -> None:
        if self.audited is not None:
            await self._audit(audited_writes.created(self.audited, obj))
        row = type(self).to_row(obj)
        try:
            await self.connection.execute(insert, row)
        except IntegrityError as exc:
            raise self._conflict(obj, exc) from exc
        self._seen[row["id"]] = obj

    async def get(self, organization_id: str, object_id: str, *, for_update: bool = False) -> T | None:
        reader = None if for_update else coalescing(self.connection)
        if reader is not None:  # a Postgres reader: one statement for this turn's gets of this table
            for row in await coalesced_by_id(reader, self.table, object_id):
                if row.organization_id == organization_id:
                    return self._saw(row)
            return None
        statement = by_id(self.table, for_update and self.connection.dialect.name == "postgresql")
        row = (await self.connection.execute(statement, {"organization_id": organization_id, "id": object_id})).first()
        return None if row is None else self._saw(row)

    async def update(self, obj: T) -> None:
        parameters = type(self).to_row(obj)
        seen = self._seen.get(parameters["id"])
        self._seen[parameters["id"]] = obj
        if self.audited is not None:
            await self._audit(audited_writes.updated(self.audited, seen, obj))
        statement = update_by_id(self.table)
        if seen is not None:
            before = type(self).to_row(seen)
            if before["organization_id"] == parameters["organization_id"]:
                columns = changed(self.table, before, parameters)
                if not columns:
                    return
                statement = update_columns(self.table, columns)
                parameters = {name: parameters[name] for name in (*columns, "organization_id", "id")}
        # The keys travel as where_* only: a parameter named like a column joins the SET clause, and assigning the
        # primary key (even its own value) makes SQLite scan every referencing row (a team: all agents).
        parameters["where_organization_id"] = parameters.pop("organization_id")
        parameters["where_id"] = parameters.pop("id")
        try:
            await self.connection.execute(statement, parameters)
        except IntegrityError as exc:
            raise self._conflict(obj, exc) from exc

    async def delete(self, organization_id: str, object_id: str) -> None:
        if self.audited is not None:
            await self._audit(audited_writes.deleted(self.audited, organization_id, object_id))
        await self.connection.execute(
            self.table.delete().where(self.table.c.organization_id == organization_id, self.table.c.id == object_id)
        )

    async def list_where(
        self, organization_id: str, page: PageRequest, *conditions: sa.ColumnElement[bool], **equal: Any
    ) -> tuple[list[T], int]:
        """A page of the organization's rows in (created_at, id) order (the page's `order`), that meet every one of
        `conditions`, whose columns named in `equal` hold the values given (a value None: no condition) and whose
        `name` the page's `name` and `q` keep, and their total (as `statements.counted`): what a `list_page` with
        filters calls (`self.list_where(organization_id, page, environment_id=environment_id)`)."""
        table = self.table
        equal = {name: value for name, value in equal.items() if value is not None}
        if not conditions and not equal and not page.filters_names:  # no filter: the statements built once
            return await self._page(organization_id, page)
        where = [table.c.organization_id == organization_id, *conditions]
        where.extend(table.c[name] == value for name, value in equal.items())
        if page.filters_names:
            where.extend(names_kept(table.c.name, page, self.connection.dialect.name))
        order = ordered(page, table.c.created_at, table.c.id)
        rows, total = await read_page_where(self.connection, organization_id, page, table, where, order)
        return [type(self).to_domain(row) for row in rows], total

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[T], int]:
        return await self.list_where(organization_id, page)

    async def newest_page(
        self, organization_id: str, page: PageRequest, statuses: Collection[enum.Enum] | None
    ) -> tuple[list[T], int]:
        """A page of the organization's rows, the newest first, whose `status` is one of `statuses` (None: any)."""
        table = self.table
        conditions: list[Any] = [table.c.organization_id == organization_id]
        if statuses is not None:
            conditions.append(table.c.status.in_(sorted(status.value for status in statuses)))
        order = (table.c.created_at.desc(), table.c.id.desc())
        rows, total = await read_page_where(self.connection, organization_id, page, table, conditions, order)
        return [type(self).to_domain(row) for row in rows], total

    async def _page(self, organization_id: str, page: PageRequest) -> tuple[list[T], int]:
        """A page of all the organization's rows, by statements built once per table and direction."""
        found, total = await plain_page(self.connection, organization_id, page, self.table, ("created_at", "id"))
        return [type(self).to_domain(row) for row in found], total
