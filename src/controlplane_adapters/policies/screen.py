"""What a policy's module is refused for before any compiler sees it: its size, its nesting, and the built-ins it
names outside the allowlist (docs/policies.md, "The sandbox").

The size and the nesting are checked in the server's process (a module nested thousands deep took the compiler tens
of seconds, and crashed it deeper still); the built-ins in the policy process (`refused_built_in` asks rego-cpp
which names are built-ins: any built-in not on `ALLOWED` is refused, and so is any name under `opa`, `http`, `net`,
`print` and `trace`, whether this rego-cpp knows it or not, where it is called, imported, replaced with `with` or
put in a built-in's place with `as`; a variable of one of those names is none of these).

The scan reads the module as the compiler would: comments are skipped, strings are not code, and a reference is
followed through dots and string keys whatever the spacing (`opa . runtime()`, `opa["runtime"]()`, `import
opa.runtime as r` all name `opa.runtime`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from controlplane_adapters.policies.built_ins import ALLOWED, FORBIDDEN_ROOTS
from controlplane_domain.policies.entity import PolicyCompileError

MAX_MODULE_BYTES = 64 * 1024
MAX_NESTING = 32

_TOKEN = re.compile(
    r"""(?P<space>[ \t\r\n]+)|(?P<comment>\#[^\n]*)|(?P<string>"(?:[^"\\\n]|\\.)*")|(?P<raw>`[^`]*`)"""
    r"""|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<number>[0-9][0-9.eE+\-]*)|(?P<other>.)""",
    re.DOTALL,
)
_OPENING = "([{"
_CLOSING = ")]}"


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str
    offset: int


def _tokens(source: str) -> Iterator[_Token]:
    for match in _TOKEN.finditer(source):
        kind = match.lastgroup or "other"
        if kind not in ("space", "comment"):
            yield _Token(kind, match.group(), match.start())


def _position(source: str, offset: int) -> tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    return line, offset - (source.rfind("\n", 0, offset) + 1) + 1


def screen(source: str, *, max_bytes: int = MAX_MODULE_BYTES, max_nesting: int = MAX_NESTING) -> None:
    """PolicyCompileError when the module is over `max_bytes` (UTF-8) or nests brackets, braces and parentheses
    deeper than `max_nesting` (strings and comments aside)."""
    size = len(source.encode())
    if size > max_bytes:
        raise PolicyCompileError(f"the module is {size} bytes, over the limit of {max_bytes}")
    depth = 0
    for token in _tokens(source):
        if token.kind != "other":
            continue
        if token.text in _OPENING:
            depth += 1
            if depth > max_nesting:
                raise PolicyCompileError(
                    f"the module nests brackets deeper than {max_nesting}", *_position(source, token.offset)
                )
        elif token.text in _CLOSING:
            depth = max(0, depth - 1)


def _key(token: _Token) -> str | None:
    """A string key's text (`["runtime"]`, `[`runtime`]`), or None."""
    if token.kind == "raw":
        return token.text[1:-1]
    if token.kind == "string":
        try:
            value = json.loads(token.text)
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    return None


USES = frozenset({"call", "import", "with", "as"})
"""The uses of a reference that name a built-in: a call (`name(`), an import, the target of `with` (a built-in
replaced) and the value after `as` (a function put in a built-in's place). A reference otherwise (`x := net`, `some
opa in input.items`, `opa.name`) reads a variable or a document, and names no built-in."""


def _closing(tokens: list[_Token], index: int) -> int:
    """The index of the bracket that closes the one at `index` (or the last token's)."""
    depth = 0
    for position in range(index, len(tokens)):
        text = tokens[position].text
        if text in _OPENING:
            depth += 1
        elif text in _CLOSING:
            depth -= 1
            if depth == 0:
                return position
    return len(tokens) - 1


def _called_after(tokens: list[_Token], index: int) -> bool:
    """Whether the reference's parts from `index` on (`.name`, `[key]`) end in a call."""
    while index < len(tokens):
        text = tokens[index].text
        if text == "(":
            return True
        if text == "." and index + 1 < len(tokens) and tokens[index + 1].kind == "name":
            index += 2
        elif text == "[":
            index = _closing(tokens, index) + 1
        else:
            return False
    return False


def references(source: str) -> Iterator[tuple[str, int, str]]:
    """Each reference's dotted name (`opa.runtime`), offset and use (`call`, `import`, `with`, `as` or `ref`): a
    name not after a dot, then `.name` and `["key"]` parts; a part that is not a constant key (`opa[x]`) ends the
    name with `[…]` (the scan goes on inside it), and the reference is a call if what follows it ends in one."""
    tokens = list(_tokens(source))
    clause: list[str | None] = []  # the last `with` or `import` before each token: whose an `as` is
    last = None
    for token in tokens:
        clause.append(last)
        if token.kind == "name" and token.text in ("with", "import"):
            last = token.text
    index = 0
    while index < len(tokens):
        token, start = tokens[index], index
        after_dot = index > 0 and tokens[index - 1].text == "."
        if token.kind != "name" or after_dot:
            index += 1
            continue
        before = tokens[index - 1].text if index > 0 else ""
        parts = [token.text]
        index += 1
        called = False
        while index < len(tokens):
            if tokens[index].text == "." and index + 1 < len(tokens) and tokens[index + 1].kind == "name":
                parts.append(tokens[index + 1].text)
                index += 2
            elif tokens[index].text == "[":
                key = _key(tokens[index + 1]) if index + 1 < len(tokens) else None
                if key is not None and index + 2 < len(tokens) and tokens[index + 2].text == "]":
                    parts.append(key)
                    index += 3
                else:
                    parts.append("[…]")
                    called = _called_after(tokens, index)
                    break
            else:
                called = tokens[index].text == "("
                break
        if called:
            use = "call"
        elif before in ("import", "with") or (before == "as" and clause[start] == "with"):
            use = before
        else:
            use = "ref"
        yield ".".join(parts), token.offset, use


def refused_built_in(source: str, is_built_in: Callable[[str], bool]) -> PolicyCompileError | None:
    """The error naming the first built-in the module calls (or imports, or replaces, or puts in a built-in's
    place) outside `ALLOWED`, and its line; or None. Anything under `FORBIDDEN_ROOTS` used so is refused, known to
    this rego-cpp or not; a variable of one of those names is no built-in."""
    for name, offset, use in references(source):
        if use not in USES:
            continue
        parts = name.split(".")
        if use == "as" and len(parts) == 1 and not is_built_in(name) and name not in ("print", "trace"):
            continue  # a variable's value in a built-in's place (`with input.x as net`): no function
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            if prefix in ALLOWED:
                break
            if parts[0] in FORBIDDEN_ROOTS or (parts[end - 1] != "[…]" and is_built_in(prefix)):
                shown = prefix if parts[0] not in FORBIDDEN_ROOTS else name.replace(".[…]", "[…]")
                return PolicyCompileError(
                    f"the built-in `{shown}` is not allowed in a policy (docs/policies.md lists those that are)",
                    *_position(source, offset),
                )
    return None
