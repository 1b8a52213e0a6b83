"""A first start with no credential says, in one line, how to make one; a configured start says nothing of it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import cli, free_port
from tests.support import PATIENCE, wait_for_answer

pytestmark = pytest.mark.e2e
HINT = "controlplane: no credential is configured"


def serve(tmp_path: Path, **env: str) -> tuple[subprocess.Popen[bytes], Path, str]:
    port = free_port()
    settings = {**os.environ, "CONTROLPLANE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'first.db'}", **env}
    if "SERVICE_API_KEY" not in env:
        settings.pop("SERVICE_API_KEY", None)
    settings.pop("SERVICE_JWT_SECRET", None)
    log = tmp_path / f"serve-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            cli("serve", "--host", "127.0.0.1", "--port", str(port), env=settings, cwd=tmp_path),
            env=settings, cwd=tmp_path, stdout=sink, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def alive() -> None:
        assert process.poll() is None, log.read_text()

    wait_for_answer(lambda http: http.get(f"{url}/api/openapi.json"), alive=alive)
    return process, log, url


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=15)


def test_a_start_with_no_credential_says_how_to_make_one(tmp_path: Path) -> None:
    process, log, url = serve(tmp_path)
    try:
        assert httpx.get(f"{url}/api/v1/agents", timeout=5).status_code == 401
    finally:
        stop(process)
    lines = [line for line in log.read_text().splitlines() if HINT in line]
    assert len(lines) == 1, log.read_text()
    assert "SERVICE_API_KEY=" in lines[0]
    assert "controlplane api-keys create" in lines[0]


def test_a_start_with_a_key_or_a_stored_key_says_nothing_of_it(tmp_path: Path) -> None:
    process, log, _ = serve(tmp_path, SERVICE_API_KEY="a-configured-key")
    stop(process)
    assert HINT not in log.read_text()
    settings = {**os.environ, "CONTROLPLANE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'first.db'}"}
    made = subprocess.run(
        cli("api-keys", "create", "--org", "default", "--name", "ops", env=settings, cwd=tmp_path),
        env=settings, cwd=tmp_path, capture_output=True, text=True, timeout=2 * PATIENCE,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    process, log, _ = serve(tmp_path)
    stop(process)
    assert HINT not in log.read_text(), "a stored key is a credential"
