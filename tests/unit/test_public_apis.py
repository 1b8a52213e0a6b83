"""Only the public APIs of libraries: no private attribute of a third-party object, no closure cells, no import of a
library's private or implementation module (and so no subclass of a class from one).

A private attribute (`x._name`, or `getattr(x, "_name")`) is ours when `x` is `self` or `cls`, or when the same
module defines `_name` (an attribute it assigns, a slot, a method, a module-level name: a class reading another
instance of itself); any other is a library's, whoever `x` is.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "src"
OURS = (
    "controlplane_adapters",
    "controlplane_client",
    "controlplane_domain",
    "controlplane_http",
    "controlplane_runtime",
    "controlplane_wire",
    "controlplane_worker",
)

# Files still allowed to break the rule, each with the reason. Keep it empty.
ALLOWED: dict[str, str] = {}

# Names with a leading underscore that are documented public API of the standard library or a library.
PUBLIC_UNDERSCORED = {
    "_make",  # collections.namedtuple
    "_asdict",  # collections.namedtuple, sqlalchemy Row
    "_replace",  # collections.namedtuple
    "_fields",  # collections.namedtuple, sqlalchemy Row
    "_field_defaults",  # collections.namedtuple
    "_mapping",  # sqlalchemy Row
    "_tuple",  # sqlalchemy Row
    "_t",  # sqlalchemy Row
    "_exit",  # os._exit
}
# Attributes that reach into a function's closure, code or globals.
FUNCTION_INTERNALS = {"__closure__", "cell_contents", "__code__", "__globals__", "__defaults__", "__kwdefaults__"}
ATTRIBUTE_FUNCTIONS = {"getattr", "setattr", "hasattr", "delattr"}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_private_module(module: str) -> bool:
    """A library module that is not its public API: a component with a leading underscore, or an `_impl` module."""
    parts = module.split(".")
    return parts[0] not in OURS and any(part.startswith("_") or part.endswith("_impl") for part in parts)


def _ours_defines(trees: Iterable[ast.Module]) -> set[str]:
    """The private names some modules define: attributes, slots, functions, classes, module-level names."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                slots = any(isinstance(target, ast.Name) and target.id == "__slots__" for target in targets)
                if slots and node.value is not None:
                    names.update(
                        constant.value
                        for constant in ast.walk(node.value)
                        if isinstance(constant, ast.Constant) and isinstance(constant.value, str)
                    )
            elif isinstance(node, ast.alias) and node.asname:
                names.add(node.asname)
    return {name for name in names if _is_private(name)}


def _is_self_or_cls(base: ast.expr) -> bool:
    return isinstance(base, ast.Name) and base.id in {"self", "cls"}


def violations(tree: ast.Module, ours: set[str]) -> Iterator[tuple[int, str]]:
    """(line, what) for each use of a library's internals in one module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in FUNCTION_INTERNALS:
                yield node.lineno, f"function internals: .{node.attr}"
            elif (
                _is_private(node.attr)
                and node.attr not in PUBLIC_UNDERSCORED
                and not _is_self_or_cls(node.value)
                and node.attr not in ours
            ):
                yield node.lineno, f"private attribute of a library's object: .{node.attr}"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ATTRIBUTE_FUNCTIONS:
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                name = node.args[1].value
                if name in FUNCTION_INTERNALS:
                    yield node.lineno, f"function internals: {node.func.id}(..., {name!r})"
                elif _is_private(name) and not _is_self_or_cls(node.args[0]) and name not in ours:
                    yield node.lineno, f"private attribute of a library's object: {node.func.id}(..., {name!r})"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _is_private_module(alias.name):
                    yield node.lineno, f"a library's private module: import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module != "__future__":
            if _is_private_module(node.module):
                yield node.lineno, f"a library's private module: from {node.module} import ..."
            elif node.module.split(".")[0] not in OURS:
                for alias in node.names:
                    if _is_private(alias.name):
                        yield node.lineno, f"a library's private name: from {node.module} import {alias.name}"


def _modules() -> dict[str, ast.Module]:
    return {
        str(path.relative_to(SOURCE)): ast.parse(path.read_text(), filename=str(path))
        for path in sorted(SOURCE.rglob("*.py"))
    }


def module_violations(tree: ast.Module) -> list[tuple[int, str]]:
    return list(violations(tree, _ours_defines([tree])))


def test_src_uses_only_public_apis_of_libraries() -> None:
    found = {
        f"{path}:{line}: {what}"
        for path, tree in _modules().items()
        if path not in ALLOWED
        for line, what in module_violations(tree)
    }
    assert sorted(found) == []


def test_every_allowed_file_still_needs_it() -> None:
    modules = _modules()
    assert [path for path in ALLOWED if path not in modules or not module_violations(modules[path])] == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("processors = compiled._bind_processors\n", "private attribute of a library's object: ._bind_processors"),
        ("histogram.labels('GET')._sum.inc(1.0)\n", "private attribute of a library's object: ._sum"),
        ("start = getattr(adapter, '_start_transaction', None)\n", "getattr(..., '_start_transaction')"),
        ("cells = handler.fn.__closure__\n", "function internals: .__closure__"),
        ("value = cell.cell_contents\n", "function internals: .cell_contents"),
        ("from litestar.dto._backend import DTOBackend\n", "from litestar.dto._backend import ..."),
        ("import litestar._openapi.schema_generation\n", "import litestar._openapi.schema_generation"),
        ("from litestar.dto import _backend\n", "from litestar.dto import _backend"),
        (
            "from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol\nclass P(HttpToolsProtocol): ...\n",
            "from uvicorn.protocols.http.httptools_impl import ...",
        ),
    ],
)
def test_the_check_sees_each_kind_of_violation(source: str, expected: str) -> None:
    found = [what for _, what in violations(ast.parse(source), set())]
    assert len(found) == 1, found
    assert expected in found[0]


def test_the_check_lets_our_own_private_names_and_public_underscored_ones_pass() -> None:
    source = (
        "class A:\n"
        "    __slots__ = ('_slot',)\n"
        "    def __init__(self) -> None:\n"
        "        self._mine = 1\n"
        "def f(a: A, other: A) -> None:\n"
        "    a._mine, other._slot, getattr(a, '_mine')\n"
        "    row._mapping, Point._make([1, 2]), os._exit\n"
        "from controlplane_domain._internal import x\n"
    )
    assert module_violations(ast.parse(source)) == []


def test_a_private_name_defined_in_another_module_does_not_make_it_ours() -> None:
    elsewhere = ast.parse("class Value:\n    def __init__(self) -> None:\n        self._value = 0\n")
    here = ast.parse("counter._value.inc(1)\n")
    assert module_violations(elsewhere) == []
    assert [what for _, what in module_violations(here)] == ["private attribute of a library's object: ._value"]
