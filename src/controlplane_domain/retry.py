"""Retry a whole use case when a concurrent transaction got in its way."""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from controlplane_domain.errors import TransientFailure

P = ParamSpec("P")
T = TypeVar("T")

MAX_ATTEMPTS = 5


def retry_transient(use_case: Callable[P, Awaitable[T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    """Run the use case again (fresh transaction, short jittered back-off) after a TransientFailure."""

    @functools.wraps(use_case)
    async def run(*args: P.args, **kwargs: P.kwargs) -> T:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                return await use_case(*args, **kwargs)
            except TransientFailure:
                if attempt == MAX_ATTEMPTS:
                    raise
                await asyncio.sleep(random.uniform(0, 0.005 * 2**attempt))  # noqa: S311 - jitter, not crypto
        raise AssertionError("unreachable")

    return run
