"""Row mapping derived from an entity's dataclass fields and its table's columns, instead of written by hand.

A field is stored in the column of its name, by its annotated type: an enum by its value; a bool, bytes, a list or
a tuple of plain values, a dict rebuilt as that type when read; a dataclass, or a container of dataclasses or
enums, as JSON builtins (msgspec, in field order: what the hand-written mappings wrote, so the stored form is the
same). A field stored otherwise (another column's name, two columns, a text form) is a `Custom`; `sealed` is the
usual one (a `SealedValue` in a key id and a data column). The mapping checks at import that every column is
written and every field read:

    projects_rows = RowMapping(Project, projects)

    class SqlProjectRepository(SqlRepository[Project]):
        rows = projects_rows  # its table, to_row and to_domain

The hot tables (agents, workers, executions, worker queues) keep their hand-written mappings."""

from __future__ import annotations

import dataclasses
import enum
import types
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar, Union, get_args, get_origin, get_type_hints

import msgspec
import sqlalchemy as sa

from controlplane_domain.secrets.entity import SealedValue

T = TypeVar("T")

Convert = Callable[[Any], Any]
_PLAIN = (str, int, float, datetime)


@dataclass(frozen=True, slots=True)
class Custom:
    """A field stored by hand: `write` gives its columns from its value, `read` its value from the row."""

    columns: tuple[str, ...]
    write: Callable[[Any], dict[str, Any]]
    read: Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Renamed:
    """A field stored in the column `column`, converted by its type as any other."""

    column: str


def renamed(column: str) -> Renamed:
    return Renamed(column)


def converted(column: str, write: Convert, read: Convert) -> Custom:
    """A field stored in one column by `write` and read back from it by `read` (a JSON form written by hand)."""
    return Custom((column,), lambda value: {column: write(value)}, lambda row: read(getattr(row, column)))


def sealed(key_column: str = "key_id", data_column: str = "sealed") -> Custom:
    """A `SealedValue` (or None) in a key id and a data column (secrets, integrations, webhooks, jobs)."""

    def write(value: SealedValue | None) -> dict[str, Any]:
        return (
            {key_column: None, data_column: None}
            if value is None
            else {key_column: value.key_id, data_column: value.data}
        )

    def read(row: Any) -> SealedValue | None:
        data = getattr(row, data_column)
        return None if data is None else SealedValue(getattr(row, key_column), bytes(data))

    return Custom((key_column, data_column), write, read)


def _optional(kind: Any) -> tuple[Any, bool]:
    """`X | None` as (X, True); any other type as (it, False)."""
    if get_origin(kind) in (Union, types.UnionType):
        args = [arg for arg in get_args(kind) if arg is not type(None)]
        if len(args) == 1 and len(get_args(kind)) == 2:
            return args[0], True
    return kind, False


def _is_plain(kind: Any) -> bool:
    return kind is Any or (isinstance(kind, type) and issubclass(kind, _PLAIN) and not issubclass(kind, enum.Enum))


def _converters(kind: Any) -> tuple[Convert | None, Convert | None]:
    """How a value of the annotated type `kind` is written to its column and read back (None: as it is)."""
    if kind is bool or kind is bytes:
        return None, kind
    if _is_plain(kind):
        return None, None
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return (lambda value: value.value), kind
    origin, args = get_origin(kind), get_args(kind)
    if origin is dict and len(args) == 2 and args[0] is str and _is_plain(args[1]):
        return None, dict
    if origin in (list, tuple) and args and _is_plain(args[0]) and (origin is list or args[1:] == (...,)):
        return list, origin
    return msgspec.to_builtins, lambda value: msgspec.convert(value, kind)


def _nullable(convert: Convert | None) -> Convert | None:
    if convert is None:
        return None
    return lambda value: None if value is None else convert(value)


class RowMapping(Generic[T]):
    """`to_row` and `to_domain` of the dataclass `entity` in `table`; `custom` maps the fields stored otherwise."""

    def __init__(
        self,
        entity: type[T],
        table: sa.Table,
        *,
        computed: dict[str, Convert] | None = None,
        **stored: Custom | Renamed,
    ) -> None:
        """`computed`: columns written from the object (a property kept for an index), never read."""
        self.entity, self.table = entity, table
        self._computed = list((computed or {}).items())
        hints = get_type_hints(entity)
        fields = [field.name for field in dataclasses.fields(entity)]  # type: ignore[arg-type]
        self._custom = [(name, how) for name, how in stored.items() if isinstance(how, Custom)]
        self._fields: list[tuple[str, str, Convert | None, Convert | None]] = []
        for name in fields:
            how = stored.get(name)
            if isinstance(how, Custom):
                continue
            kind, optional = _optional(hints[name])
            write, read = _converters(kind)
            if optional:
                write, read = _nullable(write), _nullable(read)
            self._fields.append((name, name if how is None else how.column, write, read))
        written = {column for _, column, _, _ in self._fields} | {c for _, how in self._custom for c in how.columns}
        written |= {column for column, _ in self._computed}
        if written != set(table.c.keys()) or not set(stored) <= set(fields):
            wrong = sorted(written ^ set(table.c.keys()) | set(stored) - set(fields))
            raise TypeError(f"{entity.__name__} does not map onto the table {table.name}: {wrong}")

    def to_row(self, obj: T) -> dict[str, Any]:
        row: dict[str, Any] = {}
        for name, column, write, _ in self._fields:
            value = getattr(obj, name)
            row[column] = value if write is None else write(value)
        for name, how in self._custom:
            row.update(how.write(getattr(obj, name)))
        for column, compute in self._computed:
            row[column] = compute(obj)
        return row

    def to_domain(self, row: Any) -> T:
        values: dict[str, Any] = {}
        for name, column, _, read in self._fields:
            value = getattr(row, column)
            values[name] = value if read is None else read(value)
        for name, how in self._custom:
            values[name] = how.read(row)
        return self.entity(**values)
