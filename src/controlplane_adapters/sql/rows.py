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

Each mapping's `to_row` and `to_domain` are compiled once, at import, from the source a hand-written mapping would
have (a dict display; a keyword call of the dataclass, reading a SQLAlchemy row by key, which costs a third of its
attributes): the hot tables' get, list and heartbeat routes use them too."""

from __future__ import annotations

import dataclasses
import enum
import keyword
import operator
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


def _converters(hint: Any) -> tuple[Convert | None, Convert | None]:
    """How a value of the annotated type `hint` is written to its column and read back (None: as it is)."""
    kind, optional = _optional(hint)
    write, read = _plain_converters(kind)
    if not optional:
        return write, read
    # (msgspec writes None as None; it reads an optional type at twice the cost of the type)
    return (write if write is msgspec.to_builtins else _nullable(write)), _nullable(read)


def _plain_converters(kind: Any) -> tuple[Convert | None, Convert | None]:
    if kind is bool or kind is bytes:
        return None, kind
    if _is_plain(kind):
        return None, None
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return operator.attrgetter("value"), kind
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


def _compiled(source: str, names: dict[str, Any]) -> Callable[..., Any]:
    """The one function `source` defines, with `names` (its converters) as its globals."""
    namespace = dict(names)
    exec(source, namespace)  # noqa: S102 (the source is made of the entity's fields and the table's column names)
    (function,) = (value for key, value in namespace.items() if key not in names and key != "__builtins__")
    return function  # type: ignore[no-any-return]


def _compile(
    entity: type[T],
    fields: list[tuple[str, str, Convert | None, Convert | None]],
    custom: list[tuple[str, Custom]],
    computed: list[tuple[str, Convert]],
) -> tuple[Callable[[T], dict[str, Any]], Callable[[Any], T]]:
    """`to_row` and `to_domain` of `fields` (name, column, write, read), `custom` fields and `computed` columns."""
    names: dict[str, Any] = {"entity": entity}
    row_items: list[str] = []
    by_key: list[str] = []  # the keyword arguments of the entity, from a SQLAlchemy row's mapping
    by_attribute: list[str] = []  # ...from another row's attributes (`statements.slices`' rows, tests' rows)
    for i, (name, column, write, read) in enumerate(fields):
        names[f"write{i}"], names[f"read{i}"] = write, read
        row_items.append(f"{column!r}: " + (f"obj.{name}" if write is None else f"write{i}(obj.{name})"))
        for arguments, value in ((by_key, f"values[{column!r}]"), (by_attribute, _attribute("row", column))):
            arguments.append(f"{name}={value}" if read is None else f"{name}=read{i}({value})")
    for i, (name, how) in enumerate(custom):
        names[f"custom{i}"] = how
        row_items.append(f"**custom{i}.write(obj.{name})")
        by_key.append(f"{name}=custom{i}.read(row)")
        by_attribute.append(f"{name}=custom{i}.read(row)")
    for i, (column, compute) in enumerate(computed):
        names[f"computed{i}"] = compute
        row_items.append(f"{column!r}: computed{i}(obj)")
    to_row = _compiled(f"def to_row(obj):\n    return {{{', '.join(row_items)}}}", names)
    to_domain = _compiled(
        "def to_domain(row):\n"
        "    values = getattr(row, '_mapping', None)\n"  # a SQLAlchemy row, read by key; else by attribute
        f"    if values is None:\n        return entity({', '.join(by_attribute)})\n"
        f"    return entity({', '.join(by_key)})",
        names,
    )
    return to_row, to_domain


def _attribute(obj: str, name: str) -> str:
    return f"{obj}.{name}" if name.isidentifier() and not keyword.iskeyword(name) else f"getattr({obj}, {name!r})"


class RowMapping(Generic[T]):
    """`to_row` and `to_domain` of the dataclass `entity` in `table`; `custom` maps the fields stored otherwise."""

    to_row: Callable[[T], dict[str, Any]]
    to_domain: Callable[[Any], T]

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
            write, read = _converters(hints[name])
            self._fields.append((name, name if how is None else how.column, write, read))
        written = {column for _, column, _, _ in self._fields} | {c for _, how in self._custom for c in how.columns}
        written |= {column for column, _ in self._computed}
        if written != set(table.c.keys()) or not set(stored) <= set(fields):
            wrong = sorted(written ^ set(table.c.keys()) | set(stored) - set(fields))
            raise TypeError(f"{entity.__name__} does not map onto the table {table.name}: {wrong}")
        self.to_row, self.to_domain = _compile(entity, self._fields, self._custom, self._computed)
