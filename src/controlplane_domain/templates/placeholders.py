"""`{{name}}` placeholders in the strings of a JSON body: where they are, and their substitution.

A placeholder is `{{` an identifier `}}`, with optional spaces inside the braces. Anything else between double
braces (`{{secret:NAME}}`, the secrets area's references) is no placeholder and is left as is. Only values are
searched and substituted, never the keys of objects."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from controlplane_domain.errors import TooLarge

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

Path = tuple[str | int, ...]
MAX_DEPTH = 64
"""How deeply a body, a default or a parameter's value may nest (the walks here are recursive)."""
MAX_PLACEHOLDERS = 256
"""How many placeholders a template's body may hold (422 beyond): the save-time shape check tries a few values at
each whole-string placeholder, so its work grows with their number."""


class Budget:
    """What a substitution may still write, counted as it goes (characters of strings, JSON text of whole values):
    TooLarge as soon as it is spent, before the rest is built. The count is a floor of the result's UTF-8 JSON
    size, so a result that passes here may still be measured exactly after."""

    def __init__(self, limit: int, what: str, bound: str) -> None:
        self.limit = limit
        self.left = limit
        self.what = what
        self.bound = bound

    def spend(self, amount: int) -> None:
        self.left -= amount
        if self.left < 0:
            raise TooLarge(self.what, self.bound, self.limit)


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON value nests more than `limit` arrays and objects deep (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            if level > limit:
                return True
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def strings(value: Any, path: Path = ()) -> Iterator[tuple[Path, str]]:
    """Every string value of a JSON value, with its path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings(item, (*path, index))


def dotted(path: Path) -> str:
    return ".".join(str(part) for part in path)


def placeholders(body: Any) -> Iterator[tuple[Path, str]]:
    """Every placeholder of a body: the path of its string and the parameter it names."""
    for path, text in strings(body):
        for match in PLACEHOLDER.finditer(text):
            yield path, match.group(1)


def whole(text: str) -> str | None:
    """The parameter a string names when the string is one placeholder and nothing else."""
    match = PLACEHOLDER.fullmatch(text)
    return match.group(1) if match else None


def as_text(value: Any) -> str:
    """A value inside a longer string: a string as is, null as nothing, anything else as its JSON text."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class _Values:
    """The parameters' values, with each one's text (`as_text`) and JSON size computed once, not at each use."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = values
        self.texts: dict[str, str] = {}
        self.sizes: dict[str, int] = {}

    def text(self, name: str) -> str:
        if name not in self.texts:
            self.texts[name] = as_text(self.values[name])
        return self.texts[name]

    def size(self, name: str) -> int:
        if name not in self.sizes:
            value = self.values[name]
            self.sizes[name] = len(value) if isinstance(value, str) else len(as_text(value))
        return self.sizes[name]


def _expanded(text: str, values: _Values, budget: Budget | None) -> str:
    """`text` with each placeholder replaced by its value's text, counted piece by piece."""
    parts: list[str] = []
    last = 0
    for match in PLACEHOLDER.finditer(text):
        piece, value = text[last : match.start()], values.text(match.group(1))
        if budget is not None:
            budget.spend(len(piece) + len(value))
        parts += (piece, value)
        last = match.end()
    if not parts:
        if budget is not None:
            budget.spend(len(text))
        return text
    if budget is not None:
        budget.spend(len(text) - last)
    parts.append(text[last:])
    return "".join(parts)


def _substitute(value: Any, values: _Values, budget: Budget | None) -> Any:
    if isinstance(value, str):
        name = whole(value)
        if name is not None:
            if budget is not None:
                budget.spend(values.size(name))
            return copy.deepcopy(values.values[name])
        return _expanded(value, values, budget)
    if isinstance(value, dict):
        if budget is not None:
            budget.spend(sum(len(key) + 4 for key in value) + 1 if value else 2)  # {"k":,...}
        return {key: _substitute(item, values, budget) for key, item in value.items()}
    if isinstance(value, list):
        if budget is not None:
            budget.spend(len(value) + 1 if value else 2)  # [,...]
        return [_substitute(item, values, budget) for item in value]
    if budget is not None:
        budget.spend(1)
    return value


def substitute(value: Any, values: Mapping[str, Any], budget: Budget | None = None) -> Any:
    """A copy of `value` with every placeholder replaced: a string that is one placeholder becomes the value
    itself (any JSON value), a placeholder inside a longer string its text (`as_text`). Substituted values are
    not searched again. With a `budget`, the result is counted as it is built (TooLarge once past it)."""
    return _substitute(value, _Values(values), budget)


def put(body: Any, path: Path, value: Any) -> None:
    """Set the value at `path` (which exists) of a JSON body."""
    *parents, last = path
    for part in parents:
        body = body[part]
    body[last] = value
