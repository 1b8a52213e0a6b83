"""SQL repositories on one AsyncConnection (the unit of work's transaction); every query is org-scoped."""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Hashable, Sequence
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import IntegrityError

from controlplane_adapters.sql import mapping, tables
from controlplane_adapters.sql.coalesced import KeysRead
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.rendered import postgres_rendered_sql, rendered_row
from controlplane_domain.agents.entity import Agent
from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.environments.entity import Environment, QueueStatus, WorkerQueue
from controlplane_domain.errors import Conflict, DomainError, NotFound, ValidationFailed
from controlplane_domain.executions.entity import TERMINAL, Execution, ExecutionEvent, ExecutionStatus, LeaseTerms
from controlplane_domain.executions.leases import lease_in_steps
from controlplane_domain.executions.ports import ExecutionFilter, Leased
from controlplane_domain.idempotency.entity import IdempotencyRecord
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.organizations.entity import OrganizationSettings
from controlplane_domain.paging import PageRequest
from controlplane_domain.teams.entity import Team
from controlplane_domain.teams.usecases import set_member_in_steps
from controlplane_domain.workers.entity import Worker

T = TypeVar("T")


class SqlConnection(Protocol):
    """What the repositories need of a connection: an AsyncConnection, or SQLite's loop-thread connection."""

    @property
    def dialect(self) -> Dialect: ...

    async def execute(self, statement: Any, parameters: Any = None) -> Any: ...


class Coalescing(SqlConnection, Protocol):
    """A connection whose reads may be shared with the other readers of one turn of the loop (coalesced.py)."""

    async def coalesced_read(
        self,
        kind: Any,
        key: Hashable,
        key_of: Callable[[Any], Hashable],
        read: KeysRead,
    ) -> list[Any]: ...


def _coalescing(connection: SqlConnection, what: str = "coalesces") -> Coalescing | None:
    """The connection, if its point reads (`coalesces`: a Postgres reader) or its pages (`coalesces_pages`) may
    be coalesced now: else None."""
    return connection if getattr(connection, what, False) else None  # type: ignore[return-value]


async def _coalesced(
    connection: Coalescing,
    statement: Any,
    key: Hashable,
    key_of: Callable[[Any], Hashable],
    bind: Callable[[list[Any]], dict[str, Any]],
) -> list[Any]:
    """The rows of `key` read by `statement` (a hot statement whose parameters `bind` makes of a list of keys;
    `key_of` tells a row's key), in one statement with the other readers that ask for it in this turn."""

    async def read(keys: list[Any]) -> Any:
        return (await connection.execute(statement, bind(keys))).all()

    return await connection.coalesced_read(statement, key, key_of, read)


def _row_id(row: Any) -> Hashable:
    return row.id  # type: ignore[no-any-return]


def _ids(keys: list[Any]) -> dict[str, Any]:
    return {"keys": keys}


def _row_worker(row: Any) -> Hashable:
    return (row.organization_id, row.worker_id)


def _workers(keys: list[Any]) -> dict[str, Any]:
    return {"organization_ids": [key[0] for key in keys], "worker_ids": [key[1] for key in keys]}


def _queued(status: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
    """`status = 'queued'` with the status as a literal: so the query may use the partial index of queued
    executions (a bound value does not prove the index's predicate to SQLite, nor to a generic Postgres plan)."""
    return status == sa.literal_column(tables.QUEUED)


def _held(status: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
    """`status IN ('running', 'waiting_for_input')`, literally (see `_queued`)."""
    return status.in_([sa.literal_column(f"'{held}'") for held in HELD])


@functools.cache
def _by_id(table: sa.Table, for_update: bool = False) -> sa.Select[Any]:
    """Built once per table: a statement object keeps its compiled form and cache key between requests.
    `for_update` locks the row (Postgres; SQLite writers hold the database lock already)."""
    where = (table.c.organization_id == sa.bindparam("organization_id"), table.c.id == sa.bindparam("id"))
    query = sa.select(table).where(*where)
    return hot(query.with_for_update() if for_update else query)


@functools.cache
def _by_ids(table: sa.Table) -> sa.Select[Any]:
    """The rows of a list of ids (`keys`), whatever their organization: for coalesced point reads (Postgres),
    whose readers each keep only their own organization's row."""
    return hot(sa.select(table).where(table.c.id == sa.any_(sa.bindparam("keys", type_=postgresql.ARRAY(sa.String)))))


@functools.cache
def _team_members() -> sa.Select[Any]:
    t = tables.agents
    where = (t.c.organization_id == sa.bindparam("organization_id"), t.c.team_id == sa.bindparam("team_id"))
    return hot(sa.select(t).where(*where).order_by(t.c.created_at, t.c.id))


@functools.cache
def _set_one_team(only_from: bool = False) -> sa.Update:
    """`only_from`: only if the agent is in team `only_from` (re-checked on Postgres once its row is locked)."""
    t = tables.agents
    where = [t.c.organization_id == sa.bindparam("where_organization_id"), t.c.id == sa.bindparam("where_id")]
    if only_from:
        where.append(t.c.team_id == sa.bindparam("only_from"))
    return hot(t.update().where(*where).values(team_id=sa.bindparam("team_id"), updated_at=sa.bindparam("updated_at")))


@functools.cache
def _set_member(member: bool) -> sa.Select[Any]:
    """Postgres: `TeamRepository.set_member` as one statement of its own transaction, so that the team's and the
    agent's rows stay locked only while it runs (reads, two writes and a commit a round trip apart each held
    them for four round trips, and the changes of one team queued behind each other for all of them).

    `agent`: the agent's team as the statement's snapshot sees it. `bumped`: the team's `updated_at`, if the agent
    exists and is elsewhere (`member`) or in this team (not `member`); it locks the team's row first. `moved`:
    the agent into the team or out of it, only once the team was bumped (its condition reads `bumped`, so the
    team's row is locked before the agent's, as `set_team` after `update` does), and only if the agent's row, once
    locked, is still where the snapshot saw it (a removal never undoes a concurrent move to another team). Then
    the team as the snapshot saw it (outer-joined: no team columns mean no such team), the team as bumped (its
    row once locked: a change committed meanwhile is in it), whether the agent was found and whether the snapshot
    wanted the change (wanted and not bumped: the team was deleted while the statement waited for its lock)."""
    tm, ag = tables.teams, tables.agents
    organization: sa.BindParameter[str] = sa.bindparam("member_organization_id", type_=sa.String())
    team_id: sa.BindParameter[str] = sa.bindparam("member_team_id", type_=sa.String())
    agent_id: sa.BindParameter[str] = sa.bindparam("member_agent_id", type_=sa.String())
    now = sa.bindparam("member_now", type_=tables.UtcDateTime())
    agent = sa.select(ag.c.team_id).where(ag.c.organization_id == organization, ag.c.id == agent_id).cte("agent")

    def elsewhere(column: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        return column.is_distinct_from(team_id) if member else column == team_id

    wanted = sa.exists().where(elsewhere(agent.c.team_id))  # the snapshot's agent is where the change moves it from
    bumped = (
        tm.update()
        .where(tm.c.organization_id == organization, tm.c.id == team_id, wanted)
        .values(updated_at=now)
        .returning(*tm.columns)
        .cte("bumped")
    )
    moved = (
        ag.update()
        .where(
            ag.c.organization_id == organization,
            ag.c.id == agent_id,
            elsewhere(ag.c.team_id),  # checked again on the row as it is once locked (another change got in first)
            sa.exists(sa.select(bumped.c.id)),
        )
        .values(team_id=team_id if member else sa.null(), updated_at=now)
        .returning(ag.c.id)
        .cte("moved")
    )
    one = sa.select(sa.literal_column("1").label("one")).subquery("one")
    team_of = sa.and_(tm.c.organization_id == organization, tm.c.id == team_id)
    return hot(
        sa.select(
            *tm.columns,
            *(bumped.c[column.name].label(f"bumped_{column.name}") for column in tm.columns),
            sa.exists(sa.select(agent.c.team_id)).label("agent_found"),
            wanted.label("wanted"),
        )
        .select_from(one.outerjoin(tm, team_of).outerjoin(bumped, sa.true()))
        .add_cte(moved),
        atomic=True,
    )


@functools.cache
def _insert(table: sa.Table, *, atomic: bool = False) -> sa.Insert:
    """INSERT of a row; `atomic`: on Postgres a transaction of its own when it is the unit of work's first write
    (one round trip instead of BEGIN, INSERT and COMMIT; see `hot`)."""
    return hot(table.insert(), atomic=atomic)


@functools.cache
def _update_by_id(table: sa.Table) -> sa.Update:
    """UPDATE of every column but the keys; the row is named by `where_organization_id` and `where_id`."""
    return hot(
        table.update()
        .where(
            table.c.organization_id == sa.bindparam("where_organization_id"),
            table.c.id == sa.bindparam("where_id"),
        )
        .values({c.name: sa.bindparam(c.name) for c in table.columns if c.name not in ("id", "organization_id")})
    )


@functools.cache
def _values(table: sa.Table) -> tuple[str, ...]:
    """The columns an update may write: all but the keys."""
    return tuple(c.name for c in table.columns if c.name not in ("id", "organization_id"))


def _changed(table: sa.Table, before: dict[str, Any], after: dict[str, Any]) -> tuple[str, ...]:
    """The columns an update may write (all but the keys) whose value differs between two rows."""
    return tuple(name for name in _values(table) if before[name] != after[name])


@functools.lru_cache(maxsize=512)
def _update_columns(table: sa.Table, columns: tuple[str, ...]) -> sa.Update:
    """UPDATE of the given columns only (one statement per table and column set), named like `_update_by_id`."""
    where = (table.c.organization_id == sa.bindparam("where_organization_id"), table.c.id == sa.bindparam("where_id"))
    return hot(table.update().where(*where).values({name: sa.bindparam(name) for name in columns}))


@functools.cache
def _page_of(table: sa.Table, order: tuple[str, ...]) -> tuple[sa.Select[Any], sa.Select[Any]]:
    """(count, rows) statements for one organization's page, built once per table."""
    where = table.c.organization_id == sa.bindparam("organization_id")
    count = sa.select(sa.func.count()).select_from(table).where(where)
    rows = (
        sa.select(table)
        .where(where)
        .order_by(*(table.c[name] for name in order))
        .limit(sa.bindparam("limit"))
        .offset(sa.bindparam("offset"))
    )
    return hot(count), hot(rows)


@functools.cache
def _column_names(table: sa.Table) -> tuple[str, ...]:
    return tuple(column.name for column in table.columns)


@functools.cache
def _rendered_page_of(table: sa.Table) -> sa.Select[Any]:
    """One organization's page of rows rendered as JSON objects by SQLite (see rendered.py), each with the
    organization's total (one statement, one snapshot), built once."""
    where = table.c.organization_id == sa.bindparam("organization_id")
    total = sa.select(sa.func.count()).select_from(table).where(where).scalar_subquery()
    return hot(
        sa.select(rendered_row(table), total)
        .select_from(table)
        .where(where)
        .order_by(table.c.created_at, table.c.id)
        .limit(sa.bindparam("limit"))
        .offset(sa.bindparam("offset"))
    )


@functools.cache
def _rendered_by_id(table: sa.Table) -> sa.Select[Any]:
    """One row of an organization rendered as its JSON object by SQLite (see rendered.py), built once."""
    where = (table.c.organization_id == sa.bindparam("organization_id"), table.c.id == sa.bindparam("id"))
    return hot(sa.select(rendered_row(table)).where(*where))


@functools.cache
def _postgres_rendered_pages_of(table: sa.Table) -> sa.TextualSelect:
    """Pages of (organization, limit, offset) keys, each one JSON array rendered by Postgres (rendered.py) and
    the organization's total, in one statement (one snapshot, one row a key): several requests' pages when they
    are coalesced, a unit of work's own page when not."""
    columns = ", ".join(f'"{column.name}"' for column in table.columns)
    # the names come from tables.py, every value is a bound parameter
    sql = f"""SELECT keys.organization_id, keys.page_limit, keys.page_offset,
  (SELECT concat('[', string_agg({postgres_rendered_sql(table)}, ',' ORDER BY page.created_at, page.id), ']')
   FROM (SELECT {columns} FROM {table.name} WHERE {table.name}.organization_id = keys.organization_id
         ORDER BY {table.name}.created_at, {table.name}.id LIMIT keys.page_limit OFFSET keys.page_offset) AS page
  ) AS items,
  (SELECT count(*) FROM {table.name} WHERE {table.name}.organization_id = keys.organization_id) AS total
FROM unnest(:organization_ids, :limits, :offsets) AS keys(organization_id, page_limit, page_offset)"""  # noqa: S608
    texts, numbers = postgresql.ARRAY(sa.String), postgresql.ARRAY(sa.BigInteger)  # offsets past 2**31 too
    statement = (
        sa.text(sql)
        .bindparams(
            sa.bindparam("organization_ids", type_=texts),
            sa.bindparam("limits", type_=numbers),
            sa.bindparam("offsets", type_=numbers),
        )
        .columns(
            sa.column("organization_id", sa.String),
            sa.column("page_limit", sa.Integer),
            sa.column("page_offset", sa.Integer),
            sa.column("items", sa.Text),
            sa.column("total", sa.BigInteger),
        )
    )
    return hot(statement)


def _page_key(row: Any) -> Hashable:
    return (row.organization_id, row.page_limit, row.page_offset)


def _sqlite_page_key(row: tuple[Any, ...]) -> Hashable:
    return row[:3]


def _pages(keys: list[Any]) -> dict[str, Any]:
    return {
        "organization_ids": [key[0] for key in keys],
        "limits": [key[1] for key in keys],
        "offsets": [key[2] for key in keys],
    }


class _Table(Generic[T]):
    """Add, get, update, delete and page one organization-owned table keyed by `id`.

    An update writes only the columns that changed since this unit of work read or wrote the object (all of
    them for an object it never saw). SQLite maintains an index only when the UPDATE assigns one of its
    columns: assigning every column rewrote all seven indexes of the executions table, 46 us a transaction
    against 5 for `last_seq` alone. On Postgres a narrow update also leaves alone the columns another
    transaction changed in between (an unlocked read), instead of writing them back stale."""

    table: sa.Table
    to_row: Callable[[T], dict[str, Any]]
    to_domain: Callable[[Any], T]
    unique_field = "name"
    noun = "object"

    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection
        self._seen: dict[str, T] = {}  # id -> the object as this unit of work last read or wrote it

    def _saw(self, row: Any) -> T:
        obj = type(self).to_domain(row)
        self._seen[row.id] = obj
        return obj

    def _conflict(self, obj: T, exc: IntegrityError) -> DomainError:
        if "foreign key" in str(exc.orig).lower():  # the one the table has; Postgres and SQLite say it alike
            return self._missing_reference(obj)
        value = getattr(obj, self.unique_field)
        return Conflict(f"{self.noun} with {self.unique_field} '{value}' already exists", {"field": self.unique_field})

    def _missing_reference(self, obj: T) -> DomainError:
        """What a write answers when the row it names was deleted after the use case checked it (a race)."""
        return Conflict(f"{self.noun} refers to an object that no longer exists")

    async def add(self, obj: T) -> None:
        await self._add(obj, _insert(self.table))

    async def _add(self, obj: T, insert: sa.Insert) -> None:
        row = type(self).to_row(obj)
        try:
            await self.connection.execute(insert, row)
        except IntegrityError as exc:
            raise self._conflict(obj, exc) from exc
        self._seen[row["id"]] = obj

    async def get(self, organization_id: str, object_id: str, *, for_update: bool = False) -> T | None:
        coalescing = None if for_update else _coalescing(self.connection)
        if coalescing is not None:  # a Postgres reader: one statement for this turn's gets of this table
            for row in await _coalesced(coalescing, _by_ids(self.table), object_id, _row_id, _ids):
                if row.organization_id == organization_id:
                    return self._saw(row)
            return None
        statement = _by_id(self.table, for_update and self.connection.dialect.name == "postgresql")
        row = (await self.connection.execute(statement, {"organization_id": organization_id, "id": object_id})).first()
        return None if row is None else self._saw(row)

    async def update(self, obj: T) -> None:
        parameters = type(self).to_row(obj)
        seen = self._seen.get(parameters["id"])
        self._seen[parameters["id"]] = obj
        statement = _update_by_id(self.table)
        if seen is not None:
            before = type(self).to_row(seen)
            if before["organization_id"] == parameters["organization_id"]:
                changed = _changed(self.table, before, parameters)
                if not changed:
                    return
                statement = _update_columns(self.table, changed)
                parameters = {name: parameters[name] for name in (*changed, "organization_id", "id")}
        # The keys travel as where_* only: a parameter named like a column joins the SET clause, and assigning the
        # primary key (even its own value) makes SQLite scan every referencing row (a team: all agents).
        parameters["where_organization_id"] = parameters.pop("organization_id")
        parameters["where_id"] = parameters.pop("id")
        try:
            await self.connection.execute(statement, parameters)
        except IntegrityError as exc:
            raise self._conflict(obj, exc) from exc

    async def delete(self, organization_id: str, object_id: str) -> None:
        await self.connection.execute(
            self.table.delete().where(self.table.c.organization_id == organization_id, self.table.c.id == object_id)
        )

    async def _page(self, where: Sequence[sa.ColumnElement[bool]], page: PageRequest) -> tuple[list[T], int]:
        total = (
            await self.connection.execute(sa.select(sa.func.count()).select_from(self.table).where(*where))
        ).scalar_one()
        rows = await self.connection.execute(
            sa.select(self.table)
            .where(*where)
            .order_by(self.table.c.created_at, self.table.c.id)
            .limit(page.limit)
            .offset(page.offset)
        )
        return [type(self).to_domain(row) for row in rows], total

    @property
    def rendered_fields(self) -> tuple[str, ...]:
        """The keys of `rendered_page`'s objects, in order: the table's columns."""
        return _column_names(self.table)

    async def rendered_get(self, organization_id: str, object_id: str) -> str | None:
        """`get` as the JSON object SQLite renders of the row (rendered.py); None when it is not found or the store
        renders no single rows (Postgres's gets are coalesced into one statement a turn of the loop instead): a
        read model for the HTTP layer, which takes the domain path then."""
        if self.connection.dialect.name != "sqlite":
            return None
        parameters = {"organization_id": organization_id, "id": object_id}
        row = (await self.connection.execute(_rendered_by_id(self.table), parameters)).first()
        return None if row is None else str(row[0])

    async def rendered_page(self, organization_id: str, page: PageRequest) -> tuple[str, int] | None:
        """`list_page` as a JSON array of objects rendered by the database (SQLite, Postgres; None elsewhere),
        and the total: a read model for the HTTP layer, which uses it where its wire type is the row
        (rendered.py)."""
        key = (organization_id, page.limit, page.offset)
        dialect = self.connection.dialect.name
        if dialect == "postgresql":
            statement = _postgres_rendered_pages_of(self.table)
            coalescing = _coalescing(self.connection)
            if coalescing is not None:  # a reader: one statement for this turn's pages of this table
                (row,) = await _coalesced(coalescing, statement, key, _page_key, _pages)
            else:
                (row,) = (await self.connection.execute(statement, _pages([key]))).all()
            return row.items, row.total
        if dialect != "sqlite":
            return None
        pages = _coalescing(self.connection, "coalesces_pages")
        if pages is not None:  # a reader: each page asked in this turn rendered once, for all who asked
            (row,) = await pages.coalesced_read(
                _rendered_page_of(self.table), key, _sqlite_page_key, self._sqlite_pages
            )
            return row[3], row[4]
        return await self._sqlite_page(key)

    async def _sqlite_pages(self, keys: list[Any]) -> list[tuple[Any, ...]]:
        return [(*key, *await self._sqlite_page(key)) for key in keys]

    async def _sqlite_page(self, key: tuple[str, int, int]) -> tuple[str, int]:
        organization_id, limit, offset = key
        parameters = {"organization_id": organization_id, "limit": limit, "offset": offset}
        found = (await self.connection.execute(_rendered_page_of(self.table), parameters)).all()
        if not found:  # past the end: the total still counts
            count, _ = _page_of(self.table, ("created_at", "id"))
            return "[]", (await self.connection.execute(count, parameters)).scalar_one()
        return "[" + ",".join(row[0] for row in found) + "]", found[0][1]

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[T], int]:
        count, rows = _page_of(self.table, ("created_at", "id"))
        parameters = {"organization_id": organization_id, "limit": page.limit, "offset": page.offset}
        total = (await self.connection.execute(count, parameters)).scalar_one()
        found = await self.connection.execute(rows, parameters)
        return [type(self).to_domain(row) for row in found], total


class SqlAgentRepository(_Table[Agent]):
    table = tables.agents
    to_row = staticmethod(mapping.agent_to_row)
    to_domain = staticmethod(mapping.agent_to_domain)
    noun = "agent"

    def _missing_reference(self, obj: Agent) -> DomainError:  # the team, as the use case's own check says it
        return ValidationFailed("team_id", f"team '{obj.team_id}' does not exist")

    async def add(self, obj: Agent, *, alone: bool = False) -> None:
        await self._add(obj, _insert(self.table, atomic=True) if alone else _insert(self.table))

    async def get_many(self, organization_id: str, agent_ids: Sequence[str]) -> list[Agent]:
        if not agent_ids:
            return []
        t = self.table
        rows = await self.connection.execute(
            sa.select(t).where(t.c.organization_id == organization_id, t.c.id.in_(list(agent_ids)))
        )
        return [mapping.agent_to_domain(row) for row in rows]

    async def list_by_teams(self, organization_id: str, team_ids: Sequence[str]) -> list[Agent]:
        if not team_ids:
            return []
        if len(team_ids) == 1:  # one team's members (every membership answer): a statement built once
            parameters = {"organization_id": organization_id, "team_id": team_ids[0]}
            return [mapping.agent_to_domain(row) for row in await self.connection.execute(_team_members(), parameters)]
        t = self.table
        rows = await self.connection.execute(
            sa.select(t)
            .where(t.c.organization_id == organization_id, t.c.team_id.in_(list(team_ids)))
            .order_by(t.c.created_at, t.c.id)
        )
        return [mapping.agent_to_domain(row) for row in rows]

    async def set_team(
        self,
        organization_id: str,
        agent_ids: Sequence[str],
        team_id: str | None,
        now: datetime,
        *,
        only_from: str | None = None,
    ) -> None:
        t = self.table
        ids = sorted(set(agent_ids))
        if len(ids) == 1:  # one agent joins or leaves: its UPDATE locks the one row (no lock order to keep)
            one = {"where_organization_id": organization_id, "where_id": ids[0], "team_id": team_id, "updated_at": now}
            if only_from is not None:
                one["only_from"] = only_from
            await self.connection.execute(_set_one_team(only_from is not None), one)
            return
        where = [t.c.organization_id == organization_id, t.c.id.in_(ids)]
        if only_from is not None:  # READ COMMITTED evaluates it again on a row a concurrent change updated
            where.append(t.c.team_id == only_from)
        if self.connection.dialect.name == "postgresql":
            # Lock the rows in one global order so concurrent membership changes cannot deadlock.
            await self.connection.execute(sa.select(t.c.id).where(*where).order_by(t.c.id).with_for_update())
        await self.connection.execute(t.update().where(*where).values(team_id=team_id, updated_at=now))


class SqlTeamRepository(_Table[Team]):
    table = tables.teams
    to_row = staticmethod(mapping.team_to_row)
    to_domain = staticmethod(mapping.team_to_domain)
    noun = "team"

    async def set_member(
        self, organization_id: str, team_id: str, agent_id: str, member: bool, now: datetime
    ) -> tuple[Team | None, bool]:
        if self.connection.dialect.name != "postgresql":  # SQLite's writer holds the database lock: reads, then writes
            agents = SqlAgentRepository(self.connection)
            return await set_member_in_steps(self, agents, organization_id, team_id, agent_id, member, now)
        parameters = {"member_organization_id": organization_id, "member_team_id": team_id,
                      "member_agent_id": agent_id, "member_now": now}  # fmt: skip
        row = (await self.connection.execute(_set_member(member), parameters)).first()
        seen, bumped = _slices(row, (tables.teams, tables.teams))
        if seen is None or (bumped is None and row.wanted):  # no such team, or deleted while this waited for it
            return None, bool(row.agent_found)
        return mapping.team_to_domain(bumped or seen), bool(row.agent_found)


class SqlModelRepository(_Table[LlmModel]):
    table = tables.llm_models
    to_row = staticmethod(mapping.model_to_row)
    to_domain = staticmethod(mapping.model_to_domain)
    unique_field = "value"
    noun = "model"

    async def list_page(
        self, organization_id: str, page: PageRequest, *, enabled_only: bool = False
    ) -> tuple[list[LlmModel], int]:
        where = [self.table.c.organization_id == organization_id]
        if enabled_only:
            where.append(self.table.c.enabled.is_(True))
        return await self._page(where, page)


@functools.cache
def _worker_by_id() -> sa.Select[Any]:
    t = tables.workers
    return hot(
        sa.select(t).where(
            t.c.organization_id == sa.bindparam("organization_id"), t.c.worker_id == sa.bindparam("worker_id")
        )
    )


@functools.cache
def _insert_new(dialect: str, table: sa.Table, keys: tuple[str, ...]) -> Any:
    """INSERT ... ON CONFLICT (keys) DO NOTHING, built once per dialect and table."""
    insert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)
    return hot(insert.on_conflict_do_nothing(index_elements=list(keys)))


@functools.cache
def _upsert(
    dialect: str, table: sa.Table, keys: tuple[str, ...], keep: tuple[str, ...] = (), newer: str | None = None
) -> Any:
    """INSERT ... ON CONFLICT (keys) DO UPDATE every other column from the inserted row, except those to
    `keep` (and, with `newer`, only where the stored row's `newer` column is not later than the inserted
    one's); built once per dialect and table, executed with the row (or a list of rows) as parameters."""
    insert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)
    changes = {c.name: insert.excluded[c.name] for c in table.columns if c.name not in (*keys, *keep)}
    where = None if newer is None else table.c[newer] <= insert.excluded[newer]
    return hot(insert.on_conflict_do_update(index_elements=list(keys), set_=changes, where=where))


@functools.cache
def _held_by_workers() -> sa.Select[Any]:
    """The executions held by a list of (organization, worker) pairs, given as two arrays of the same length:
    for coalesced reads (Postgres), whose readers each keep only the rows of their own pair."""
    t = tables.executions
    texts = postgresql.ARRAY(sa.String)
    asked = (
        sa.func.unnest(sa.bindparam("organization_ids", type_=texts), sa.bindparam("worker_ids", type_=texts))
        .table_valued("organization_id", "worker_id")
        .render_derived(name="asked")
    )
    held_by = sa.and_(t.c.organization_id == asked.c.organization_id, t.c.worker_id == asked.c.worker_id)
    return hot(sa.select(t).select_from(asked.join(t, held_by)).where(_held(t.c.status)))


@functools.cache
def _held_by_worker() -> sa.Select[Any]:
    t = tables.executions
    return hot(
        sa.select(t).where(
            t.c.organization_id == sa.bindparam("organization_id"),
            t.c.worker_id == sa.bindparam("worker_id"),
            _held(t.c.status),
        )
    )


LEASE_TABLES = (tables.worker_queues, tables.workers, tables.executions, tables.agents)


@functools.cache
def _lease_candidate() -> sa.Select[Any]:
    """SQLite: what a lease reads, as one statement (its writer holds the database lock: nothing to skip): the
    queue, the worker (outer-joined by its id), the queue's oldest queued execution and its agent, each table's
    columns in order."""
    q, w, x, a = LEASE_TABLES
    queued = x.alias("queued")
    oldest = (
        sa.select(queued.c.id)
        .where(
            queued.c.organization_id == q.c.organization_id,
            queued.c.worker_queue_id == q.c.id,
            _queued(queued.c.status),
        )
        .order_by(queued.c.queued_at, queued.c.id)
        .limit(1)
        .scalar_subquery()
    )
    worker_of = sa.and_(w.c.organization_id == q.c.organization_id, w.c.worker_id == sa.bindparam("worker_id"))
    execution_of = sa.and_(x.c.organization_id == q.c.organization_id, x.c.id == oldest)
    agent_of = sa.and_(a.c.organization_id == x.c.organization_id, a.c.id == x.c.agent_id)
    columns = [
        column.label(f"{prefix}_{column.name}")
        for prefix, table in zip("qwxa", LEASE_TABLES, strict=True)
        for column in table.columns
    ]
    joined = q.outerjoin(w, worker_of).outerjoin(x, execution_of).outerjoin(a, agent_of)
    where = (q.c.organization_id == sa.bindparam("organization_id"), q.c.id == sa.bindparam("queue_id"))
    return hot(sa.select(*columns).select_from(joined).where(*where))


@functools.cache
def _lease_next() -> sa.Select[Any]:
    """Postgres: a whole lease as one statement, what `executions.leased` decides written in SQL.

    `picked`: the queue's oldest queued execution, if the queue is active (`FOR UPDATE SKIP LOCKED`: one that
    another lease is taking is skipped). `leased`: that execution running, attempt + 1, held by the worker until
    `expires_at`, `started_at` and `updated_at` now, `last_seq` + 1. `told`: its `status` event (status, attempt,
    worker_id) at the new `last_seq`. Then the queue (no row: no such queue), the worker (outer-joined by its id),
    the execution as leased and its agent, each table's columns in order. A statement of its own transaction:
    the row is locked only while it runs. (The parameters are named `lease_*`: one named like a column of the
    updated table would join its SET clause.)"""
    q, w, x, a = LEASE_TABLES
    e = tables.execution_events
    organization: sa.BindParameter[str] = sa.bindparam("lease_organization_id", type_=sa.String())
    queue_id: sa.BindParameter[str] = sa.bindparam("lease_queue_id", type_=sa.String())
    worker_id: sa.BindParameter[str] = sa.bindparam("lease_worker_id", type_=sa.String())
    now = sa.bindparam("lease_now", type_=tables.UtcDateTime())
    is_active = q.c.status == sa.literal_column(f"'{QueueStatus.ACTIVE.value}'")
    active = sa.exists().where(q.c.organization_id == organization, q.c.id == queue_id, is_active)
    picked = (
        sa.select(x.c.organization_id, x.c.id)
        .where(
            x.c.organization_id == organization,
            x.c.worker_queue_id == queue_id,
            _queued(x.c.status),
            active,
        )
        .order_by(x.c.queued_at, x.c.id)
        .limit(1)
        .with_for_update(skip_locked=True)
        .cte("picked")
    )
    leased = (
        x.update()
        .where(x.c.organization_id == picked.c.organization_id, x.c.id == picked.c.id)
        .values(
            status=sa.literal_column(f"'{ExecutionStatus.RUNNING.value}'"),
            attempt=x.c.attempt + sa.literal_column("1"),
            worker_id=worker_id,
            lease_expires_at=sa.bindparam("lease_until", type_=tables.UtcDateTime()),
            started_at=now,
            updated_at=now,
            last_seq=x.c.last_seq + sa.literal_column("1"),
        )
        .returning(*x.columns)
        .cte("leased")
    )
    data = sa.func.jsonb_build_object(
        sa.literal_column("'status'"), leased.c.status, sa.literal_column("'attempt'"), leased.c.attempt,
        sa.literal_column("'worker_id'"), leased.c.worker_id,
    )  # fmt: skip
    event = sa.select(
        leased.c.id, leased.c.organization_id, leased.c.last_seq, sa.literal_column("'status'"), data,
        leased.c.attempt, leased.c.updated_at,
    )  # fmt: skip
    told = (
        e.insert()
        .from_select(["execution_id", "organization_id", "seq", "type", "data", "attempt", "created_at"], event)
        .cte("told")
    )
    worker_of = sa.and_(w.c.organization_id == q.c.organization_id, w.c.worker_id == worker_id)
    agent_of = sa.and_(a.c.organization_id == leased.c.organization_id, a.c.id == leased.c.agent_id)
    columns = [
        *(column.label(f"q_{column.name}") for column in q.columns),
        *(column.label(f"w_{column.name}") for column in w.columns),
        *(leased.c[column.name].label(f"x_{column.name}") for column in x.columns),
        *(column.label(f"a_{column.name}") for column in a.columns),
    ]
    joined = q.outerjoin(w, worker_of).outerjoin(leased, sa.true()).outerjoin(a, agent_of)
    where = (q.c.organization_id == organization, q.c.id == queue_id)
    return hot(sa.select(*columns).select_from(joined).where(*where).add_cte(told), atomic=True)


@functools.cache
def _row_of(table: sa.Table) -> Any:
    """A row class named like the table's columns, for one table's slice of a joined row."""
    return collections.namedtuple("Row", [column.name for column in table.columns])


def _slices(row: Sequence[Any], joined: tuple[sa.Table, ...]) -> list[Any]:
    """A row of several tables' columns (in order) cut into one row per table, or None for a table the outer
    joins did not find."""
    out, start = [], 0
    for width, make in _cuts(joined):
        part = row[start : start + width]
        start += width
        out.append(make(part) if any(value is not None for value in part) else None)
    return out


@functools.cache
def _cuts(joined: tuple[sa.Table, ...]) -> tuple[tuple[int, Any], ...]:
    """Each joined table's width and row maker, worked out once."""
    return tuple((len(table.columns), _row_of(table)._make) for table in joined)


@functools.cache
def _events_after() -> sa.Select[Any]:
    t = tables.execution_events
    return hot(
        sa.select(t)
        .where(
            t.c.organization_id == sa.bindparam("organization_id"),
            t.c.execution_id == sa.bindparam("execution_id"),
            t.c.seq > sa.bindparam("after"),
        )
        .order_by(t.c.seq)
        .limit(sa.bindparam("limit"))
    )


@functools.cache
def _extend_leases() -> sa.Update:
    t = tables.executions
    return hot(
        t.update()
        .where(
            t.c.organization_id == sa.bindparam("where_organization_id"),
            t.c.worker_id == sa.bindparam("where_worker_id"),
            _held(t.c.status),
        )
        .values(lease_expires_at=sa.bindparam("until"))
    )


@functools.lru_cache(maxsize=256)
def _update_if_at(columns: tuple[str, ...]) -> sa.Update:
    """UPDATE of the given columns of an execution still at `expected_seq` (compare-and-set), named like
    `_update_by_id`."""
    t = tables.executions
    return hot(_update_columns(t, columns).where(t.c.last_seq == sa.bindparam("expected_seq")))


# A change's events reach Postgres as one JSON array of records (`_events_json`), unnested by
# `jsonb_to_recordset`: five typed arrays cost the driver more than the rest of the statement (asyncpg checks each
# element of an array against the abstract collection types, and encodes timestamps one by one).
EVENT_RECORD = (
    ("seq", sa.Integer()), ("type", sa.String()), ("attempt", sa.Integer()), ("data", JSONB()),
    ("created_at", sa.DateTime(timezone=True)),
)  # fmt: skip


@functools.lru_cache(maxsize=256)
def _record_in_one(columns: tuple[str, ...] | None) -> sa.Select[Any]:
    """Postgres: an execution's change and its events as one statement (data-modifying CTEs), atomic on its own.
    `columns` None inserts the execution; otherwise `_update_if_at`. The events (`_events_of`) are inserted only
    if the execution was, and the statement returns its id only then."""
    t = tables.executions
    if columns is None:
        write: Any = t.insert().values({c.name: sa.bindparam(c.name) for c in t.columns})
    else:
        write = _update_if_at(columns)
    changed = write.returning(t.c.id, t.c.organization_id).cte("changed")
    return hot(sa.select(changed.c.id).add_cte(_events_of(changed)), atomic=True)


def _events_of(changed: sa.CTE) -> sa.CTE:
    """The insert of a change's events (the `events` parameter, a JSON array of records) for each row of
    `changed`."""
    records = (
        sa.func.jsonb_to_recordset(sa.cast(sa.bindparam("events", type_=sa.Text()), JSONB))
        .table_valued(*(sa.column(name, kind) for name, kind in EVENT_RECORD))
        .render_derived(name="event", with_types=True)
    )
    rows = sa.select(changed.c.id, changed.c.organization_id, *records.c).select_from(changed.join(records, sa.true()))
    names = ["execution_id", "organization_id", *(name for name, _ in EVENT_RECORD)]
    return tables.execution_events.insert().from_select(names, rows).cte("inserted")


def _found(table: sa.Table, key: str) -> sa.Exists:
    """A row of `table` whose organization and id are the new execution's `organization_id` and `key`."""
    return sa.exists().where(
        table.c.organization_id == sa.bindparam("organization_id", type_=table.c.organization_id.type),
        table.c.id == sa.bindparam(key, type_=sa.String()),
    )


@functools.cache
def _insert_if_found() -> sa.Insert:
    """SQLite: the insert of an agent's new execution, only if its worker queue and its agent are found."""
    t = tables.executions
    values = sa.select(*(sa.bindparam(c.name, type_=c.type) for c in t.columns)).where(
        _found(tables.worker_queues, "worker_queue_id"), _found(tables.agents, "agent_id")
    )
    return hot(t.insert().from_select([c.name for c in t.columns], values))


@functools.cache
def _add_if_found() -> sa.Select[Any]:
    """Postgres: `_record_in_one(None)` only if the execution's worker queue and agent exist in its organization,
    answering whether each does (one statement: the reads an execute needs and its write)."""
    t = tables.executions
    queue, agent = _found(tables.worker_queues, "worker_queue_id"), _found(tables.agents, "agent_id")
    found = sa.select(queue.label("queue"), agent.label("agent"))
    found_cte = found.cte("found")
    values = sa.select(*(sa.bindparam(c.name, type_=c.type) for c in t.columns)).where(
        found_cte.c.queue, found_cte.c.agent
    )
    write = t.insert().from_select([c.name for c in t.columns], values)
    changed = write.returning(t.c.id, t.c.organization_id).cte("changed")
    return hot(sa.select(found_cte.c.queue, found_cte.c.agent).add_cte(_events_of(changed)), atomic=True)


def _check_events(execution: Execution, events: Sequence[ExecutionEvent]) -> None:
    if any((e.execution_id, e.organization_id) != (execution.id, execution.organization_id) for e in events):
        raise ValueError("the events of a change are the changed execution's")


def _add_events_json(parameters: dict[str, Any], events: Sequence[ExecutionEvent]) -> None:
    """The `events` parameter of `_events_of`: the events' columns as one JSON array (timestamps in RFC 3339)."""
    records = [
        {"seq": e.seq, "type": e.type.value, "attempt": e.attempt, "data": e.data, "created_at": e.created_at}
        for e in events
    ]
    parameters["events"] = _EVENTS_JSON.encode(records).decode()


_EVENTS_JSON = msgspec.json.Encoder()


_WORKER_KEY = ("organization_id", "worker_id")
_WORKER_KEPT = ("registered_at", "queue_id")  # what an upsert of a stored worker leaves as it is


@functools.cache
def _move_worker() -> sa.Update:
    t = tables.workers
    where = (t.c.organization_id == sa.bindparam("where_organization_id"), t.c.worker_id == sa.bindparam("where_id"))
    return hot(t.update().where(*where).values(queue_id=sa.bindparam("queue_id")))


class SqlWorkerRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection

    async def get(self, organization_id: str, worker_id: str) -> Worker | None:
        parameters = {"organization_id": organization_id, "worker_id": worker_id}
        row = (await self.connection.execute(_worker_by_id(), parameters)).first()
        return None if row is None else mapping.worker_to_domain(row)

    async def register(self, worker: Worker) -> bool:
        """INSERT ... ON CONFLICT DO NOTHING: a concurrent registration waits for the first to commit, then
        inserts nothing (rowcount 0)."""
        statement = _insert_new(self.connection.dialect.name, tables.workers, _WORKER_KEY)
        result = await self.connection.execute(statement, mapping.worker_to_row(worker))
        return bool(result.rowcount == 1)

    async def save(self, worker: Worker) -> None:
        """Insert or update in one statement; registered_at and queue_id keep their stored values."""
        statement = _upsert(self.connection.dialect.name, tables.workers, _WORKER_KEY, _WORKER_KEPT)
        await self.connection.execute(statement, mapping.worker_to_row(worker))

    async def save_reports(self, workers: Sequence[Worker]) -> None:
        """One executemany of the upsert, which leaves a row alone where the stored heartbeat is later."""
        dialect = self.connection.dialect.name
        statement = _upsert(dialect, tables.workers, _WORKER_KEY, _WORKER_KEPT, newer="last_heartbeat_at")
        await self.connection.execute(statement, [mapping.worker_to_row(worker) for worker in workers])

    async def move_to_queue(self, organization_id: str, worker_id: str, queue_id: str) -> None:
        parameters = {"where_organization_id": organization_id, "where_id": worker_id, "queue_id": queue_id}
        await self.connection.execute(_move_worker(), parameters)

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Worker], int]:
        count, rows = _page_of(tables.workers, ("registered_at", "worker_id"))
        parameters = {"organization_id": organization_id, "limit": page.limit, "offset": page.offset}
        total = (await self.connection.execute(count, parameters)).scalar_one()
        found = await self.connection.execute(rows, parameters)
        return [mapping.worker_to_domain(row) for row in found], total

    async def count_active(self, organization_id: str, queue_ids: Sequence[str], since: datetime) -> dict[str, int]:
        if not queue_ids:
            return {}
        t = tables.workers
        rows = await self.connection.execute(
            sa.select(t.c.queue_id, sa.func.count())
            .where(
                t.c.organization_id == organization_id,
                t.c.queue_id.in_(list(queue_ids)),
                t.c.last_heartbeat_at >= since,
            )
            .group_by(t.c.queue_id)
        )
        return {str(queue_id): int(count) for queue_id, count in rows}


class SqlApiKeyRepository(_Table[ApiKey]):
    table = tables.api_keys
    to_row = staticmethod(mapping.api_key_to_row)
    to_domain = staticmethod(mapping.api_key_to_domain)
    unique_field = "id"
    noun = "api key"

    async def find_for_authentication(self, key_id: str) -> ApiKey | None:
        row = (await self.connection.execute(sa.select(self.table).where(self.table.c.id == key_id))).first()
        return None if row is None else mapping.api_key_to_domain(row)


class SqlOrganizationRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection

    async def get_settings(self, organization_id: str) -> OrganizationSettings | None:
        t = tables.organization_settings
        row = (await self.connection.execute(sa.select(t).where(t.c.organization_id == organization_id))).first()
        return None if row is None else mapping.settings_to_domain(row)

    async def save_settings(self, settings: OrganizationSettings) -> None:
        statement = _upsert(self.connection.dialect.name, tables.organization_settings, ("organization_id",))
        await self.connection.execute(statement, mapping.settings_to_row(settings))


class SqlIdempotencyRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection

    def _where(self, organization_id: str, key: str) -> tuple[sa.ColumnElement[bool], ...]:
        t = tables.idempotency_records
        return (t.c.organization_id == organization_id, t.c.key == key)

    async def get(self, organization_id: str, key: str) -> IdempotencyRecord | None:
        t = tables.idempotency_records
        row = (await self.connection.execute(sa.select(t).where(*self._where(organization_id, key)))).first()
        return None if row is None else mapping.record_to_domain(row)

    async def add(self, record: IdempotencyRecord) -> None:
        try:
            await self.connection.execute(tables.idempotency_records.insert().values(**mapping.record_to_row(record)))
        except IntegrityError as exc:
            raise Conflict("idempotency key in use") from exc

    async def save(self, record: IdempotencyRecord) -> None:
        statement = _upsert(self.connection.dialect.name, tables.idempotency_records, ("organization_id", "key"))
        await self.connection.execute(statement, mapping.record_to_row(record))

    async def delete(self, organization_id: str, key: str) -> None:
        await self.connection.execute(tables.idempotency_records.delete().where(*self._where(organization_id, key)))

    async def delete_expired(self, now: datetime, limit: int) -> int:
        t = tables.idempotency_records
        expired = (  # by its index; rows another node is deleting are skipped, not waited for (nor deadlocked on)
            sa.select(t.c.organization_id, t.c.key)
            .where(t.c.expires_at <= now)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        result = await self.connection.execute(t.delete().where(sa.tuple_(t.c.organization_id, t.c.key).in_(expired)))
        return int(result.rowcount)


class SqlEnvironmentRepository(_Table[Environment]):
    table = tables.environments
    to_row = staticmethod(mapping.environment_to_row)
    to_domain = staticmethod(mapping.environment_to_domain)
    noun = "environment"


class SqlQueueRepository(_Table[WorkerQueue]):
    table = tables.worker_queues
    to_row = staticmethod(mapping.queue_to_row)
    to_domain = staticmethod(mapping.queue_to_domain)
    noun = "worker queue"

    def _missing_reference(self, obj: WorkerQueue) -> DomainError:  # the environment, deleted meanwhile
        return NotFound("environment", obj.environment_id)

    async def list_page(
        self, organization_id: str, page: PageRequest, *, environment_id: str | None = None
    ) -> tuple[list[WorkerQueue], int]:
        where = [self.table.c.organization_id == organization_id]
        if environment_id is not None:
            where.append(self.table.c.environment_id == environment_id)
        return await self._page(where, page)


HELD = (ExecutionStatus.RUNNING.value, ExecutionStatus.WAITING_FOR_INPUT.value)


class SqlExecutionRepository(_Table[Execution]):
    table = tables.executions
    to_row = staticmethod(mapping.execution_to_row)
    to_domain = staticmethod(mapping.execution_to_domain)
    unique_field = "id"
    noun = "execution"

    @property
    def _postgres(self) -> bool:
        return self.connection.dialect.name == "postgresql"

    async def list_page(  # type: ignore[override]
        self, organization_id: str, page: PageRequest, where: ExecutionFilter
    ) -> tuple[list[Execution], int]:
        t = self.table
        conditions = [t.c.organization_id == organization_id]
        for column, value in (
            (t.c.status, where.status.value if where.status else None),
            (t.c.agent_id, where.agent_id),
            (t.c.team_id, where.team_id),
            (t.c.worker_queue_id, where.worker_queue_id),
        ):
            if value is not None:
                conditions.append(column == value)
        return await self._page(conditions, page)

    async def lease_next(self, organization_id: str, queue_id: str, terms: LeaseTerms) -> Leased:
        if not self._postgres:  # SQLite's writer holds the database lock: one read, then the record
            reads = {"organization_id": organization_id, "queue_id": queue_id, "worker_id": terms.worker_id}
            found = (await self.connection.execute(_lease_candidate(), reads)).first()
            return await lease_in_steps(*self._lease_row(found), terms, self.record)
        parameters = {"lease_organization_id": organization_id, "lease_queue_id": queue_id,
                      "lease_worker_id": terms.worker_id, "lease_now": terms.now,
                      "lease_until": terms.expires_at}  # fmt: skip
        row = (await self.connection.execute(_lease_next(), parameters)).first()
        return Leased(*self._lease_row(row))

    def _lease_row(self, row: Any) -> tuple[WorkerQueue | None, Worker | None, Execution | None, Agent | None]:
        """A row of `LEASE_TABLES` (or None: no such queue) as the queue, worker, execution and agent it holds."""
        queue, worker, execution, agent = (None, None, None, None) if row is None else _slices(row, LEASE_TABLES)
        return (
            None if queue is None else mapping.queue_to_domain(queue),
            None if worker is None else mapping.worker_to_domain(worker),
            None if execution is None else self._saw(execution),
            None if agent is None else mapping.agent_to_domain(agent),
        )

    async def running_for_worker(self, organization_id: str, worker_id: str) -> list[Execution]:
        coalescing = _coalescing(self.connection)
        if coalescing is not None:  # a Postgres reader (heartbeats): one statement for this turn's workers
            key = (organization_id, worker_id)
            rows = await _coalesced(coalescing, _held_by_workers(), key, _row_worker, _workers)
            return [mapping.execution_to_domain(row) for row in rows]
        parameters = {"organization_id": organization_id, "worker_id": worker_id}
        rows = await self.connection.execute(_held_by_worker(), parameters)
        return [mapping.execution_to_domain(row) for row in rows]

    async def extend_leases(self, organization_id: str, worker_id: str, until: datetime) -> int:
        parameters = {"where_organization_id": organization_id, "where_worker_id": worker_id, "until": until}
        result = await self.connection.execute(_extend_leases(), parameters)
        return int(result.rowcount)

    async def expired_leases(self, now: datetime, limit: int) -> list[Execution]:
        t = self.table
        query = (
            sa.select(t)
            .where(_held(t.c.status), t.c.lease_expires_at < now)
            .order_by(t.c.lease_expires_at, t.c.id)
            .limit(limit)
        )
        if self._postgres:
            query = query.with_for_update(skip_locked=True)
        return [self._saw(row) for row in await self.connection.execute(query)]

    async def count_queued(self, organization_id: str, queue_ids: Sequence[str]) -> dict[str, int]:
        if not queue_ids:
            return {}
        t = self.table
        rows = await self.connection.execute(
            sa.select(t.c.worker_queue_id, sa.func.count())
            .where(
                t.c.organization_id == organization_id,
                t.c.worker_queue_id.in_(list(queue_ids)),
                _queued(t.c.status),
            )
            .group_by(t.c.worker_queue_id)
        )
        return {str(queue_id): int(count) for queue_id, count in rows}

    async def count_unfinished(self, organization_id: str, queue_id: str) -> int:
        t = self.table
        if self._postgres:  # waits for the executions being written; holds off new ones until the commit
            await self.connection.execute(sa.text(f"LOCK TABLE {t.name} IN SHARE MODE"))
        unfinished = [s.value for s in ExecutionStatus if s not in TERMINAL]
        result = await self.connection.execute(
            sa.select(sa.func.count()).where(
                t.c.organization_id == organization_id, t.c.worker_queue_id == queue_id, t.c.status.in_(unfinished)
            )
        )
        return int(result.scalar_one())

    async def record(self, before: Execution | None, after: Execution, events: Sequence[ExecutionEvent]) -> bool:
        columns: tuple[str, ...] | None = None
        if before is None:
            row = mapping.execution_to_row(after)
        else:  # only what changed is converted and written (a round trip records three changes)
            if (before.organization_id, before.id) != (after.organization_id, after.id):
                raise ValueError("a change records the same execution it was made from")
            row = mapping.execution_changes(before, after, _values(self.table)) or {"last_seq": after.last_seq}
            columns = tuple(row)
            row.update(organization_id=after.organization_id, id=after.id)
        _check_events(after, events)
        try:
            if self._postgres:
                recorded = await self._record_in_one(before, row, columns, events)
            else:
                recorded = await self._record_in_steps(before, row, columns, events)
        except IntegrityError as exc:
            raise self._conflict(after, exc) from exc
        if recorded:
            self._seen[after.id] = after
        return recorded

    async def _record_in_one(
        self, before: Execution | None, row: dict[str, Any], columns: tuple[str, ...] | None,
        events: Sequence[ExecutionEvent],
    ) -> bool:  # fmt: skip
        parameters = row if columns is None else self._where_at(before, row, columns)
        _add_events_json(parameters, events)
        return (await self.connection.execute(_record_in_one(columns), parameters)).first() is not None

    async def add_if_found(self, execution: Execution, events: Sequence[ExecutionEvent]) -> tuple[bool, bool]:
        if execution.agent_id is None:
            raise ValueError("add_if_found adds an agent's execution")
        _check_events(execution, events)
        if not self._postgres:  # the insert of what is found, its events; the reads only to say what was not
            try:
                inserted = await self.connection.execute(_insert_if_found(), mapping.execution_to_row(execution))
            except IntegrityError as exc:
                raise self._conflict(execution, exc) from exc
            if inserted.rowcount == 1:
                await self.add_events(events)
                self._seen[execution.id] = execution
                return True, True
            return (
                await SqlQueueRepository(self.connection).get(execution.organization_id, execution.worker_queue_id)
                is not None,
                await SqlAgentRepository(self.connection).get(execution.organization_id, execution.agent_id)
                is not None,
            )
        parameters = mapping.execution_to_row(execution)
        _add_events_json(parameters, events)
        try:
            row = (await self.connection.execute(_add_if_found(), parameters)).first()
        except IntegrityError as exc:
            raise self._conflict(execution, exc) from exc
        found = (bool(row[0]), bool(row[1]))
        if all(found):
            self._seen[execution.id] = execution
        return found

    async def _record_in_steps(
        self, before: Execution | None, row: dict[str, Any], columns: tuple[str, ...] | None,
        events: Sequence[ExecutionEvent],
    ) -> bool:  # fmt: skip
        if columns is None:
            await self.connection.execute(_insert(self.table), row)
        else:
            result = await self.connection.execute(_update_if_at(columns), self._where_at(before, row, columns))
            if result.rowcount != 1:
                return False
        await self.add_events(events)
        return True

    @staticmethod
    def _where_at(before: Execution | None, row: dict[str, Any], columns: tuple[str, ...]) -> dict[str, Any]:
        assert before is not None
        parameters = {name: row[name] for name in columns}
        parameters.update(where_organization_id=row["organization_id"], where_id=row["id"],
                          expected_seq=before.last_seq)  # fmt: skip
        return parameters

    async def add_events(self, events: Sequence[ExecutionEvent]) -> None:
        if events:
            await self.connection.execute(_insert(tables.execution_events), [mapping.event_to_row(e) for e in events])

    async def events_after(
        self, organization_id: str, execution_id: str, after_seq: int, limit: int
    ) -> list[ExecutionEvent]:
        parameters = {"organization_id": organization_id, "execution_id": execution_id, "after": after_seq,
                      "limit": limit}  # fmt: skip
        rows = await self.connection.execute(_events_after(), parameters)
        return [mapping.event_to_domain(row) for row in rows]
