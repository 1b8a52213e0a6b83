"""One execution's facts as analytics counts them: its tokens (from the usage its worker reported), its duration,
its queue wait, its cost; and the percentile every store computes (the continuous percentile)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

MAX_TOKENS = 10**12
"""A token count above this (or negative, or not an integer) is not counted: the sums stay within 64 bits."""
PROMPT_KEYS = ("prompt_tokens", "input_tokens")
COMPLETION_KEYS = ("completion_tokens", "output_tokens")


def _count(usage: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = usage.get(key)
        if value is not None:
            return value if type(value) is int and 0 <= value <= MAX_TOKENS else None
    return None


def reported_tokens(usage: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """(prompt, completion) tokens of a worker's usage: `prompt_tokens` (else `input_tokens`) and
    `completion_tokens` (else `output_tokens`), each an integer from 0 to MAX_TOKENS; None otherwise."""
    return _count(usage, PROMPT_KEYS), _count(usage, COMPLETION_KEYS)


def seconds_between(start: datetime | None, end: datetime | None) -> float | None:
    """`end - start` in seconds (microseconds exact, then divided), None unless both are known."""
    if start is None or end is None:
        return None
    delta = end - start
    return ((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds) / 1e6


def cost_of(
    prompt_tokens: int | None, completion_tokens: int | None, input_price: float | None, output_price: float | None
) -> float:
    """Prompt tokens at the input price plus completion tokens at the output price (prices per million); a part
    whose tokens or price is unknown costs 0."""
    prompt = prompt_tokens * input_price if prompt_tokens is not None and input_price is not None else 0.0
    completion = completion_tokens * output_price if completion_tokens is not None and output_price is not None else 0.0
    return (prompt + completion) / 1e6


def percentile(ordered: Sequence[float], fraction: float) -> float | None:
    """The continuous percentile of sorted values: the value at position fraction x (n - 1), interpolated
    linearly between its neighbours (SQL's `percentile_cont`, the same arithmetic); None for no values."""
    if not ordered:
        return None
    position = fraction * (len(ordered) - 1)
    low = math.floor(position)
    high = math.ceil(position)
    first, second = ordered[low], ordered[high]
    return first + (second - first) * (position - low)
