"""Rendering a tenant's text (a job's prompt with its payload, a workflow step's prompt with its run's input and
outputs): counted as it is built, and stopped as soon as the result passes its limit, so that a prompt of many
placeholders of a large value never builds more than the limit allows."""

from __future__ import annotations

import re
from collections.abc import Callable

from controlplane_domain.errors import ValidationFailed

PROMPT_LIMIT = 200_000
"""An execution's prompt, in characters (`executions.entity.PROMPT_MAX_LENGTH`): what a rendered prompt may be."""


class RenderedTooLong(ValidationFailed):
    """The rendered text would pass its limit (`limit` characters): nothing past the limit was built."""

    def __init__(self, field: str, limit: int) -> None:
        super().__init__(field, f"rendered, it would be more than {limit} characters (the prompt's limit)")
        self.limit = limit


def render_counted(
    pattern: re.Pattern[str], text: str, value: Callable[[re.Match[str]], str], *, limit: int, field: str
) -> str:
    """`text` with each match of `pattern` replaced by `value(match)` (computed once for each distinct match
    text); RenderedTooLong as soon as the result passes `limit` characters."""
    parts: list[str] = []
    seen: dict[str, str] = {}
    size = last = 0
    for match in pattern.finditer(text):
        key = match.group(0)
        if key not in seen:
            seen[key] = value(match)
        piece, filled = text[last : match.start()], seen[key]
        size += len(piece) + len(filled)
        if size > limit:
            raise RenderedTooLong(field, limit)
        parts += (piece, filled)
        last = match.end()
    size += len(text) - last
    if size > limit:
        raise RenderedTooLong(field, limit)
    parts.append(text[last:])
    return "".join(parts)
