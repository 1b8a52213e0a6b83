"""`controlplane --version` prints the installed version (and the API's), and nothing else runs."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from controlplane_http import API_VERSION
from controlplane_http.cli import main


def test_version_prints_the_package_version_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"controlplane {project['version']} (API {API_VERSION})\n"
