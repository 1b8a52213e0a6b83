"""Hot statements: built once with SQLAlchemy Core, compiled once per dialect, executed on the driver itself.

SQLAlchemy builds and compiles every statement of the hot paths (so the schema has one source: each area's table,
registered in `schema.py`), but its per-execution machinery (execution context, events, result proxies) costs
several times what SQLite takes to answer a point query (docs/benchmarks.md). A statement registered with `hot()`
keeps its compiled SQL, its bind order, its type processors and a row class; the units of work run it on the DBAPI
cursor (SQLite) or the asyncpg connection (Postgres) and apply the same processors SQLAlchemy would. All of it is
read through SQLAlchemy's public API: the compiled statement's `string`, `positiontup` and `binds`, the
statement's selected (or RETURNING) columns, and each type's `bind_processor` and `result_processor` for the
dialect. A row's fields are the columns' keys (an unlabelled expression's key, e.g. `count` for `count(*)`, where
SQLAlchemy's own rows say `count_1`: read such a column by position).
`tests/contract/test_hot_statements.py` checks that both paths return the same rows on both databases.
"""

from __future__ import annotations

import collections
import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

S = TypeVar("S")


READ, WRITE, ATOMIC = "read", "write", "atomic"


@dataclass(frozen=True, slots=True)
class Plan:
    """One compiled form of a hot statement for one dialect and one set of parameter names."""

    sql: str
    names: tuple[str, ...]  # bind parameters in positional order
    defaults: Mapping[str, Any]  # values the statement itself carries (literals)
    bound: tuple[tuple[int, Callable[[Any], Any]], ...]  # (position, bind processor) where there is one
    row: Callable[[Sequence[Any]], Any] | None  # None: the statement returns no rows
    processed: tuple[tuple[int, Callable[[Any], Any]], ...]  # (column, result processor) where there is one
    kind: str = WRITE  # READ (a SELECT that locks nothing), WRITE, or ATOMIC (see `hot`)

    def values(self, parameters: Mapping[str, Any]) -> list[Any]:
        defaults = self.defaults
        out = [parameters[name] if name in parameters else defaults[name] for name in self.names]
        for position, process in self.bound:
            out[position] = process(out[position])
        return out

    def rows(self, raw: Sequence[Sequence[Any]]) -> list[Any]:
        make, processed = self.row, self.processed
        assert make is not None
        if not processed:
            return [make(record) for record in raw]
        out = []
        for record in raw:
            values = list(record)
            for column, process in processed:
                values[column] = process(values[column])
            out.append(make(values))
        return out


class HotResult:
    """The slice of SQLAlchemy's Result the repositories use."""

    __slots__ = ("_rows", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int = -1) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)

    def all(self) -> list[Any]:
        return list(self._rows)

    def first(self) -> Any:
        return self._rows[0] if self._rows else None

    def scalar(self) -> Any:
        return self._rows[0][0] if self._rows else None

    def scalar_one(self) -> Any:
        if len(self._rows) != 1:
            raise sa.exc.NoResultFound("expected exactly one row") if not self._rows else sa.exc.MultipleResultsFound()
        return self._rows[0][0]


_HOT: dict[int, tuple[Any, dict[tuple[str, tuple[str, ...]], Plan], bool]] = {}


def hot(statement: S, *, atomic: bool = False) -> S:
    """Register a statement that is built once and executed often (keep it alive: the registry holds it).

    `atomic`: a write complete in itself, the last statement of its repository's write. Run as the last write of a
    unit of work's `commit_with` that has written nothing before it, it is sent as a transaction of its own
    (Postgres: without the BEGIN and COMMIT); anywhere else it joins the unit of work's transaction."""
    _HOT[id(statement)] = (statement, {}, atomic)
    return statement


def plan_for(statement: Any, dialect: Dialect, parameters: Any) -> Plan | None:
    """The compiled plan of a registered statement, or None for any other statement. `parameters` is a mapping,
    or (executemany) a non-empty list of mappings with the same keys; the plan then fits each of them."""
    entry = _HOT.get(id(statement))
    if entry is None:
        return None
    if isinstance(parameters, list):
        first: Any = parameters[0] if parameters else None
        if not _is_mapping(first) or any(not _is_mapping(p) or p.keys() != first.keys() for p in parameters):
            return None
        parameters = first
    elif parameters is not None and not _is_mapping(parameters):
        return None
    keys = tuple(parameters) if parameters else ()
    plan = entry[1].get((dialect.name, keys))
    if plan is None:
        plan = entry[1][(dialect.name, keys)] = _compile(entry[0], dialect, keys, entry[2])
    return plan


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # a dict first: the ABC's check costs more


LOCKING = (" FOR UPDATE", " FOR NO KEY UPDATE", " FOR SHARE", " FOR KEY SHARE")


def _compile(statement: Any, dialect: Dialect, keys: tuple[str, ...], atomic: bool) -> Plan:
    compiled: Any = statement.compile(dialect=dialect, column_keys=list(keys) or None)
    sql: str = compiled.string
    if "POSTCOMPILE" in sql or compiled.positiontup is None:
        raise ValueError(f"a hot statement needs plain bind parameters (no expanding IN): {sql}")
    names = tuple(compiled.positiontup)
    binds = compiled.binds
    defaults = {name: bind.effective_value for name, bind in binds.items() if not bind.required and name in names}
    bound = tuple(
        (position, process)
        for position, name in enumerate(names)
        if (process := binds[name].type.dialect_impl(dialect).bind_processor(dialect)) is not None
    )
    row = None
    processed: list[tuple[int, Callable[[Any], Any]]] = []
    columns = _returned_columns(statement)
    if columns:
        fields = [str(key or "") for key, _ in columns]  # (one without a name is renamed: read it by position)
        row_class: Any = collections.namedtuple("Row", fields, rename=True)  # type: ignore[misc]
        row = row_class._make
        for position, (_, column) in enumerate(columns):
            process = column.type.dialect_impl(dialect).result_processor(dialect, None)
            if process is not None:
                processed.append((position, process))
    if atomic:
        kind = ATOMIC
    elif sql.lstrip().upper().startswith("SELECT") and not any(lock in sql.upper() for lock in LOCKING):
        kind = READ
    else:
        kind = WRITE
    return Plan(sql, names, defaults, bound, row, tuple(processed), kind)


def _returned_columns(statement: Any) -> list[tuple[str, Any]]:
    """The (key, column) pairs of the rows a statement returns: a SELECT's columns, or what an INSERT, UPDATE or
    DELETE returns (RETURNING); none for a write that returns nothing.

    Read from a copy: SQLAlchemy keeps a DML statement's columns once read, and a statement derived from it later
    (`.returning(...)`) would inherit that none are returned."""
    exported: Any
    if isinstance(statement, sa.Select | sa.CompoundSelect | sa.TextualSelect):
        exported = copy.copy(statement).selected_columns
    elif isinstance(statement, sa.Insert | sa.Update | sa.Delete):
        exported = copy.copy(statement).exported_columns
    else:
        raise ValueError(f"a hot statement is a SELECT, INSERT, UPDATE or DELETE: {type(statement).__name__}")
    return list(exported.items())
