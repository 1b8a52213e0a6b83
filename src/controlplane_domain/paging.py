"""Paging of lists: a request window and the page it yields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from controlplane_domain.errors import ValidationFailed

T = TypeVar("T")

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
MAX_OFFSET = 2**63 - 1  # the largest signed 64-bit integer: what every store's offset takes


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


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a list and the total number of items in the whole list."""

    items: list[T]
    total: int
    limit: int
    offset: int
