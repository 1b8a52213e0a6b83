"""The domain stays pure: it imports the standard library and itself, nothing else, and names no database."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import controlplane_domain

DOMAIN = Path(controlplane_domain.__file__).parent


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_domain_imports_only_the_standard_library_and_itself() -> None:
    allowed = set(sys.stdlib_module_names) | {"controlplane_domain", "__future__"}
    offenders = {str(path.relative_to(DOMAIN)): sorted(imported_roots(path) - allowed) for path in DOMAIN.rglob("*.py")}
    offenders = {path: names for path, names in offenders.items() if names}
    assert offenders == {}


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("from litestar import Litestar\nimport sqlalchemy.orm\nfrom . import sibling\n")
    assert imported_roots(module) == {"litestar", "sqlalchemy"}


STORE_WORDS = re.compile(r"postgres|sqlite|round[ -]trips?\b|\bdialects?\b|for update|skip locked", re.IGNORECASE)
"""What the domain leaves to the stores: which database, how many trips to it, its locking clauses."""


def store_words(text: str) -> list[str]:
    return [match.group(0) for match in STORE_WORDS.finditer(text)]


def test_no_domain_module_names_a_database_or_a_round_trip() -> None:
    offenders = {str(path.relative_to(DOMAIN)): store_words(path.read_text()) for path in DOMAIN.rglob("*.py")}
    assert {path: words for path, words in offenders.items() if words} == {}


def test_the_check_sees_a_store_word() -> None:
    assert store_words("one statement on Postgres, a round trip; SQLite: FOR UPDATE") == [
        "Postgres", "round trip", "SQLite", "FOR UPDATE"
    ]  # fmt: skip
