"""End to end: the real server process, over real HTTP on loopback."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Server, free_port, start_server, stop_server
from tests.support import PATIENCE, SERVICE_KEY, bearer, make_jwt, wait_for_answer

pytestmark = pytest.mark.e2e


def test_a_user_session_against_the_real_server(sqlite_server: Server) -> None:
    with sqlite_server.client() as client:
        health = client.get("/api/health").json()
        assert (health["status"], health["version"], health["database"]["status"]) == ("healthy", "v0.3.0", "ok")
        assert client.get("/api/v1/agents", headers={"Authorization": ""}).status_code == 401
        agent = client.post("/api/v1/agents", json={"name": "writer", "runtime": "default"}).json()
        team = client.post("/api/v1/teams", json={"name": "crew", "configuration": {"llm": {"temperature": 0.2}}})
        assert team.status_code == 201
        added = client.post(f"/api/v1/teams/{team.json()['id']}/agents/{agent['id']}").json()
        assert added["configuration"]["member_ids"] == [agent["id"]]
        assert client.get(f"/api/v1/agents/{agent['id']}").json()["team_id"] == team.json()["id"]
        other = bearer(make_jwt("elsewhere"))
        assert client.get(f"/api/v1/agents/{agent['id']}", headers=other).status_code == 404
        beat = client.post("/api/v1/workers/heartbeat", json={"worker_id": "w", "environment_name": "e"})
        assert beat.json()["registered"] is True
        document = client.get("/api/openapi.json").json()
        assert document["openapi"] == "3.1.0"


def test_data_survives_a_restart(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'keep.db'}"
    server = start_server(tmp_path, url)
    try:
        with server.client() as client:
            agent_id = client.post("/api/v1/agents", json={"name": "durable"}).json()["id"]
    finally:
        stop_server(server)
    assert server.process.returncode == 0, server.log.read_text()
    assert "Application shutdown complete" in server.log.read_text()
    again = start_server(tmp_path, url)
    try:
        with again.client() as client:
            assert client.get(f"/api/v1/agents/{agent_id}").json()["name"] == "durable"
    finally:
        stop_server(again)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_server_stopped_by_a_signal_exits_0_after_a_clean_stop(tmp_path: Path, stop: signal.Signals) -> None:
    """What a supervisor sees: SIGTERM (or Ctrl-C) stops the server cleanly, and the process says so with 0 (uvicorn
    raised SIGTERM again once stopped, which killed the process: -15, 143 in a shell)."""
    server = start_server(tmp_path, f"sqlite+aiosqlite:///{tmp_path / 'stop.db'}")
    try:
        with server.client() as client:
            beat = client.post("/api/v1/workers/heartbeat", json={"worker_id": "w", "environment_name": "e"})
            assert beat.status_code == 200, beat.text
        server.process.send_signal(stop)
        status = server.process.wait(timeout=PATIENCE)
    finally:
        stop_server(server)
    log = server.log.read_text()
    assert status == 0, log
    assert "Application shutdown complete" in log
    assert "Finished server process" in log


def run_cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controlplane_http.cli", *args],
        env={**os.environ, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=2 * PATIENCE,
        check=False,
    )


def test_migrate_sql_prints_the_schema(tmp_path: Path) -> None:
    result = run_cli("migrate", "--sql", env={"CONTROLPLANE_DATABASE_URL": "sqlite+aiosqlite:///x.db"}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "CREATE TABLE agents" in result.stdout
    assert "CREATE TABLE teams" in result.stdout
    assert not (tmp_path / "x.db").exists()


def test_serve_refuses_an_old_schema_when_auto_migrate_is_off(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    env = {"CONTROLPLANE_DATABASE_URL": url, "CONTROLPLANE_AUTO_MIGRATE": "false", "SERVICE_API_KEY": "k"}
    refused = run_cli("serve", "--port", "1", env=env, cwd=tmp_path)
    assert refused.returncode != 0
    assert "controlplane migrate" in refused.stdout + refused.stderr
    migrated = run_cli("migrate", env=env, cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    assert "database is at revision" in migrated.stdout


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SERVICE_AUTH_REQUIRED": "maybe"}, "SERVICE_AUTH_REQUIRED must be true or false"),
        ({"CONTROLPLANE_DATABASE_URL": "postgresql://db/cp"}, "CONTROLPLANE_DATABASE_URL must use one of the drivers"),
        ({"CONTROLPLANE_LOG_LEVEL": "loud"}, "CONTROLPLANE_LOG_LEVEL must be one of critical, error"),
    ],
)
def test_bad_configuration_is_a_clear_error(tmp_path: Path, env: dict[str, str], message: str) -> None:
    result = run_cli("serve", env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_unreachable_database_stops_serve_at_once_with_one_line(tmp_path: Path, workers: str) -> None:
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/nothing"  # nobody listens there
    result = run_cli("serve", "--port", str(free_port()), "--workers", workers,
                     env={"CONTROLPLANE_DATABASE_URL": url}, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert f"controlplane: cannot start: cannot use the database {url} (CONTROLPLANE_DATABASE_URL)" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_sqlite_file_in_a_missing_directory_stops_serve_with_one_line(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'missing' / 'cp.db'}"
    result = run_cli("serve", "--port", str(free_port()), env={"CONTROLPLANE_DATABASE_URL": url}, cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert "unable to open database file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_read_only_sqlite_file_stops_serve_with_one_line(tmp_path: Path) -> None:
    """(It served, answering health 200 and every write 503.) Root ignores file modes, so as root the server runs
    without the capability that lets it."""
    path = tmp_path / "ro.db"
    env = {"CONTROLPLANE_DATABASE_URL": f"sqlite+aiosqlite:///{path}"}
    assert run_cli("migrate", env=env, cwd=tmp_path).returncode == 0
    path.chmod(0o444)
    as_user = ["setpriv", "--inh-caps=-dac_override", "--bounding-set=-dac_override"] if os.getuid() == 0 else []
    result = subprocess.run(
        [*as_user, sys.executable, "-m", "controlplane_http.cli", "serve", "--port", str(free_port())],
        env={**os.environ, **env}, cwd=tmp_path, capture_output=True, text=True, timeout=2 * PATIENCE, check=False,
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert f"the SQLite database {path} cannot be written" in result.stderr


def test_a_link_to_a_writable_file_and_a_file_uri_still_serve(tmp_path: Path) -> None:
    """The writability check looks at the real file's directory (where SQLite puts the WAL), not the link's, and
    leaves `file:` URIs to SQLite. (As root, the server runs without the capability that ignores file modes.)"""
    real, links = tmp_path / "real", tmp_path / "links"
    real.mkdir()
    links.mkdir()
    (links / "cp.db").symlink_to(real / "cp.db")
    links.chmod(0o555)  # the link's directory is read-only; the file's is not
    as_user = ["setpriv", "--inh-caps=-dac_override", "--bounding-set=-dac_override"] if os.getuid() == 0 else []
    try:
        for url in (f"sqlite+aiosqlite:///{links / 'cp.db'}", f"sqlite+aiosqlite:///file:{real / 'uri.db'}?uri=true"):
            port = free_port()
            env = {**os.environ, "CONTROLPLANE_DATABASE_URL": url, "SERVICE_API_KEY": SERVICE_KEY}
            process = subprocess.Popen(
                [*as_user, sys.executable, "-m", "controlplane_http.cli", "serve", "--port", str(port)],
                env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            try:
                base = f"http://127.0.0.1:{port}"

                def alive(process: subprocess.Popen[str] = process) -> None:
                    assert process.poll() is None, process.stderr.read() if process.stderr else ""

                wait_for_answer(lambda http, base=base: http.get(f"{base}/api/health", headers=bearer(SERVICE_KEY)),
                                alive=alive)  # fmt: skip
                created = httpx.post(f"{base}/api/v1/agents", json={"name": "a"}, headers=bearer(SERVICE_KEY))
                assert created.status_code == 201, created.text
            finally:
                process.terminate()
                process.wait(timeout=PATIENCE)
    finally:
        links.chmod(0o755)


def test_a_schema_migrated_by_a_newer_release_is_named(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    env = {"CONTROLPLANE_DATABASE_URL": f"sqlite+aiosqlite:///{path}"}
    assert run_cli("migrate", env=env, cwd=tmp_path).returncode == 0
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999'")
    for command in (["serve", "--port", str(free_port())], ["migrate"]):
        result = run_cli(*command, env=env, cwd=tmp_path)
        assert result.returncode == 3, result.stderr
        assert "database schema is at revision 9999, which this release does not know" in result.stderr


def test_issuing_a_key_does_not_migrate_when_auto_migrate_is_off(tmp_path: Path) -> None:
    path = tmp_path / "unmigrated.db"
    env = {"CONTROLPLANE_DATABASE_URL": f"sqlite+aiosqlite:///{path}", "CONTROLPLANE_AUTO_MIGRATE": "false"}
    result = run_cli("api-keys", "create", "--org", "acme", "--name", "k", env=env, cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert "run `controlplane migrate`" in result.stderr
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall() == []


def test_cli_issues_a_bootstrap_key_that_the_server_accepts(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'keys.db'}"
    created = run_cli(
        "api-keys", "create", "--org", "acme", "--name", "bootstrap", "--role", "admin",
        env={"CONTROLPLANE_DATABASE_URL": url}, cwd=tmp_path,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]
    assert key.startswith("cpk_")
    server = start_server(tmp_path, url, token=key, SERVICE_API_KEY="")
    try:
        with server.client() as client:
            headers = bearer(key)
            agent = client.post("/api/v1/agents", json={"name": "from-cli-key"}, headers=headers)
            assert agent.status_code == 201
            assert agent.json()["organization_id"] == "acme"
            assert client.get("/api/v1/api-keys", headers=headers).json()["items"][0]["name"] == "bootstrap"
    finally:
        stop_server(server)
