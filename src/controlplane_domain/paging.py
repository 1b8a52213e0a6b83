"""Paging of lists: a request window (its order, and its name filters) and the page it yields."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from controlplane_domain.errors import ValidationFailed

T = TypeVar("T")
U = TypeVar("U")

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
MAX_OFFSET = 2**63 - 1  # the largest signed 64-bit integer: what every store's offset takes
MAX_COUNTED = 10_000
"""`max_counted`: a list's `total` counts the rows past its `offset` up to this many: a list holding more answers
`offset` + MAX_COUNTED, a floor (a client pages on while `offset` is below `total`, as ever). Counting a list to
its end takes a time that grows with the organization's rows, on some stores in the event loop's thread."""
MAX_QUERY_LENGTH = 200
"""The longest `q` (and `name`) a list takes."""

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class Order(StrEnum):
    """A list's direction over (created_at, id): oldest first, or newest first."""

    ASC = "asc"
    DESC = "desc"


def fold_ascii(text: str) -> str:
    """`text` with the ASCII letters A to Z in lowercase and every other character as it is: what `q` compares.
    Only ASCII folds, so that every store agrees: some fold ASCII only, others what their locale says, which
    differs between deployments (docs/api-decisions.md, "Names")."""
    return text.translate(_ASCII_LOWER)


@dataclass(frozen=True, slots=True)
class PageRequest:
    """A window of a list ordered by (created_at, id) in `order`; for the lists of named objects, only those
    named `name` exactly and those whose name holds `q` (ASCII letters in any case, other characters as given)."""

    limit: int = DEFAULT_LIMIT
    offset: int = 0
    order: Order = Order.ASC
    name: str | None = None
    q: str | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= MAX_LIMIT:
            raise ValidationFailed("limit", f"must be between 1 and {MAX_LIMIT}", "query")
        if self.offset < 0:
            raise ValidationFailed("offset", "must be 0 or more", "query")
        if self.offset > MAX_OFFSET:
            raise ValidationFailed("offset", f"must be at most {MAX_OFFSET}", "query")
        if self.name is not None and len(self.name) > MAX_QUERY_LENGTH:
            raise ValidationFailed("name", f"must be at most {MAX_QUERY_LENGTH} characters", "query")
        if self.q is not None and len(self.q) > MAX_QUERY_LENGTH:
            raise ValidationFailed("q", f"must be at most {MAX_QUERY_LENGTH} characters", "query")

    @property
    def newest_first(self) -> bool:
        return self.order is Order.DESC

    @property
    def filters_names(self) -> bool:
        """Whether the request keeps only some names (`name` or `q` given)."""
        return self.name is not None or self.q is not None

    def keeps_name(self, name: str) -> bool:
        """Whether an object named `name` is in the list `name` and `q` draw."""
        if self.name is not None and name != self.name:
            return False
        return self.q is None or fold_ascii(self.q) in fold_ascii(name)


def counted(rows: int, page: PageRequest) -> int:
    """A list's `total` when it holds `rows` rows: counted to at most `offset` + MAX_COUNTED (the SQL stores stop
    counting there: `controlplane_adapters.sql.statements.counted`)."""
    return min(rows, page.offset + MAX_COUNTED)


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a list and the total number of items in the whole list (at most `offset` + MAX_COUNTED)."""

    items: list[T]
    total: int
    limit: int
    offset: int

    def map(self, convert: Callable[[T], U]) -> Page[U]:
        """The same page of each item converted (a view of it)."""
        return Page([convert(item) for item in self.items], self.total, self.limit, self.offset)
