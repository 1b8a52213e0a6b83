"""Iterators over a list operation's pages (`{items, total, limit, offset}`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T", covariant=True)
I = TypeVar("I")  # noqa: E741


class Page(Protocol[T]):
    @property
    def items(self) -> Sequence[T]: ...
    @property
    def total(self) -> int: ...


def iterate(list_method: Callable[..., Page[I]], /, *args: Any, limit: int = 200, **params: Any) -> Iterator[I]:
    """Every item of `list_method(*args, **params)`, a page of `limit` at a time (`iterate(client.list_agents)`)."""
    offset = 0
    while True:
        page = list_method(*args, limit=limit, offset=offset, **params)
        yield from page.items
        offset += len(page.items)
        if not page.items or offset >= page.total:
            return


async def aiterate(
    list_method: Callable[..., Awaitable[Page[I]]], /, *args: Any, limit: int = 200, **params: Any
) -> AsyncIterator[I]:
    """As `iterate`, for `AsyncClient`'s list operations (`async for agent in aiterate(client.list_agents)`)."""
    offset = 0
    while True:
        page = await list_method(*args, limit=limit, offset=offset, **params)
        for item in page.items:
            yield item
        offset += len(page.items)
        if not page.items or offset >= page.total:
            return
