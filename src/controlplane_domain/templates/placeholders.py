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

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

Path = tuple[str | int, ...]
MAX_DEPTH = 64
"""How deeply a body, a default or a parameter's value may nest (the walks here are recursive)."""


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


def substitute(value: Any, values: Mapping[str, Any]) -> Any:
    """A copy of `value` with every placeholder replaced: a string that is one placeholder becomes the value
    itself (any JSON value), a placeholder inside a longer string its text (`as_text`). Substituted values are
    not searched again."""
    if isinstance(value, str):
        name = whole(value)
        if name is not None:
            return copy.deepcopy(values[name])
        return PLACEHOLDER.sub(lambda match: as_text(values[match.group(1)]), value)
    if isinstance(value, dict):
        return {key: substitute(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, values) for item in value]
    return value


def put(body: Any, path: Path, value: Any) -> None:
    """Set the value at `path` (which exists) of a JSON body."""
    *parents, last = path
    for part in parents:
        body = body[part]
    body[last] = value
