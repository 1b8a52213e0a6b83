"""Paging of lists: a request window and the page it yields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from controlplane_domain.errors import ValidationFailed

T = TypeVar("T")

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
MAX_OFFSET = 2**63 - 1  # the largest signed 64-bit integer: what every store's offset takes
MAX_COUNTED = 10_000
"""`max_counted`: a list's `total` counts the rows past its `offset` up to this many: a list holding more answers
`offset` + MAX_COUNTED, a floor (a client pages on while `offset` is below `total`, as ever). Counting a list to
its end takes a time that grows with the organization's rows, on some stores in the event loop's thread."""


@dataclass(frozen=True, slots=True)
class PageRequest:
    """A window of a list ordered by (created_at, id)."""

    limit: int = DEFAULT_LIMIT
    offset: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= MAX_LIMIT:
            raise ValidationFailed("limit", f"must be between 1 and {MAX_LIMIT}", "query")
        if self.offset < 0:
            raise ValidationFailed("offset", "must be 0 or more", "query")
        if self.offset > MAX_OFFSET:
            raise ValidationFailed("offset", f"must be at most {MAX_OFFSET}", "query")


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
