"""The architecture's import contracts (pyproject.toml `[tool.importlinter]`, docs/architecture.md) hold: a new
import the wrong way, between packages or between the domain's areas, fails the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("controlplane_domain", "controlplane_adapters", "controlplane_runtime", "controlplane_http",
            "controlplane_wire", "controlplane_client", "controlplane_worker")  # fmt: skip
LINT = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"


def lint_imports(project: Path, source: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the packages under `source`, with `project`'s pyproject.toml."""
    environment = {**os.environ, "PYTHONPATH": str(source)}  # (before the editable install's path)
    return subprocess.run(
        [sys.executable, "-c", LINT], cwd=project, env=environment, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip


def broken_contracts(result: subprocess.CompletedProcess[str]) -> set[str]:
    """The names of the contracts the run reports broken (it wraps long names: compared word by word)."""
    names = [
        c["name"] for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    ]
    report = " ".join(result.stdout.split())
    return {name for name in names if f"{' '.join(name.split())} BROKEN" in report}


def test_every_import_contract_is_kept() -> None:
    result = lint_imports(ROOT, ROOT / "src")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def copy_of_the_sources(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for package in PACKAGES:
        shutil.copytree(
            ROOT / "src" / package, tmp_path / "src" / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return tmp_path / "src"


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("controlplane_domain/agents/entity.py", "import sqlalchemy", "The domain imports no framework"),
        (
            "controlplane_domain/executions/transitions.py",
            "from controlplane_domain.workflows import advance",
            "No circles between the domain's areas",
        ),
        (
            "controlplane_domain/projects/usecases.py",
            "from controlplane_domain.templates import usecases",
            "The domain's areas talk through their entities, their ports and the modules named here",
        ),
        ("controlplane_client/_core.py", "import controlplane_http.app", "The client needs the wire types"),
        ("controlplane_worker/tasks.py", "import controlplane_adapters.clock", "The reference worker needs"),
        ("controlplane_wire/agents.py", "import controlplane_domain.agents.usecases", "The wire types need msgspec"),
        ("controlplane_adapters/clock.py", "import controlplane_runtime.periodic", "The server's layers"),
    ],
)
def test_a_forbidden_import_breaks_its_contract(tmp_path: Path, module: str, line: str, contract: str) -> None:
    """The same check on a copy of the sources with one import added the wrong way."""
    source = copy_of_the_sources(tmp_path)
    path = source / module
    path.write_text(path.read_text() + f"\n{line}  # noqa\n")
    result = lint_imports(tmp_path, source)
    assert result.returncode == 1, result.stdout + result.stderr
    assert any(name.startswith(contract) for name in broken_contracts(result)), result.stdout
