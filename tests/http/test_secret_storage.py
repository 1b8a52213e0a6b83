"""Secrets at rest: no plaintext in the SQLite files or the logs, where the key comes from, 503 without one on
Postgres, and `controlplane secrets rotate-key`."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.settings.loading import load_settings
from controlplane_adapters.settings.model import ConfigError
from controlplane_domain.secrets.entity import SecretUnreadable
from controlplane_http.bootstrap import build_app
from controlplane_http.cli import main
from tests.conftest import app_settings
from tests.databases import truncate
from tests.http.test_secrets import VALUE, _reveal, create_secret
from tests.support import SERVICE_KEY, bearer


def _client(settings: Any) -> TestClient[Any]:
    client: TestClient[Any] = TestClient(build_app(settings, clock=ManualClock()))
    client.headers.update(bearer(SERVICE_KEY))
    return client


def _files(directory: Path, prefix: str) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(directory.glob(prefix + "*")) if path.is_file())


class _Everything(logging.Handler):
    """Every record any logger emits, as text (the app's logging setup may move pytest's own handler aside)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.name} {record.getMessage()} {record.exc_text or ''}")


def test_the_sqlite_files_and_the_logs_never_hold_a_value(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'test.db'}"
    second = VALUE + "-rotated"
    root, logs = logging.getLogger(), _Everything()
    level = root.level
    with _client(app_settings(url)) as client:
        root.addHandler(logs)
        root.setLevel(logging.DEBUG)
        try:
            body = {"name": "TOKEN", "value": VALUE, "description": "the description is stored as is"}
            created = client.post("/api/v1/secrets", json=body, headers={"Idempotency-Key": "k1"})
            assert created.status_code == 201
            assert client.post("/api/v1/secrets", json=body, headers={"Idempotency-Key": "k1"}).status_code == 201
            assert client.patch(f"/api/v1/secrets/{created.json()['id']}", json={"value": second}).status_code == 200
            assert client.post("/api/v1/secrets", json={"name": "bad name", "value": VALUE}).status_code == 422
            assert client.blocking_portal.call(_reveal, client, ["TOKEN"], "execution-1", "w") == {"TOKEN": second}
            during = _files(tmp_path, "test.db")
        finally:
            root.removeHandler(logs)
            root.setLevel(level)
    after = _files(tmp_path, "test.db")
    assert b"the description is stored as is" in after  # the test reads what the database holds
    fingerprint = hashlib.sha256(b'POST /api/v1/secrets\n{"name":"TOKEN","value":"%s"' % VALUE.encode()).hexdigest()
    for stored in (during, after):
        for plaintext in (VALUE, second):
            assert plaintext.encode() not in stored
            assert plaintext.encode("utf-16-le") not in stored
            assert base64.b64encode(plaintext.encode()) not in stored
        assert fingerprint.encode() not in stored
    printed = capfd.readouterr()
    logged = "\n".join(logs.lines) + printed.out + printed.err
    assert "/api/v1/secrets" in logged  # the requests were logged, and seen here
    assert VALUE not in logged
    assert second not in logged


def test_sqlite_without_a_key_makes_a_key_file_once_and_keeps_using_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="controlplane.secrets")
    settings = replace(app_settings(f"sqlite+aiosqlite:///{tmp_path / 'test.db'}"), secrets_key=None)
    with _client(settings) as client:
        create_secret(client, "TOKEN")
    key_file = tmp_path / "test.db.secrets-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert len(base64.b64decode(key_file.read_text())) == 32
    said = [record.getMessage() for record in caplog.records if str(key_file) in record.getMessage()]
    assert len(said) == 1
    assert "0600" in said[0]
    caplog.clear()
    with _client(settings) as client:  # a restart reads the same key
        assert client.blocking_portal.call(_reveal, client, ["TOKEN"], "e", "w") == {"TOKEN": VALUE}
    assert not [record for record in caplog.records if str(key_file) in record.getMessage()]


def test_the_memory_store_without_a_key_works_with_a_key_of_its_own() -> None:
    with _client(replace(app_settings("memory://"), secrets_key=None)) as client:
        create_secret(client, "TOKEN")
        assert client.blocking_portal.call(_reveal, client, ["TOKEN"], "e", "w") == {"TOKEN": VALUE}


def test_postgres_without_a_key_refuses_values_and_nothing_else(postgres_url: str) -> None:
    asyncio.run(truncate(postgres_url))
    with _client(app_settings(postgres_url)) as client:
        secret = create_secret(client, "TOKEN")
    with _client(replace(app_settings(postgres_url), secrets_key=None)) as client:
        path = f"/api/v1/secrets/{secret['id']}"
        refused = [
            client.post("/api/v1/secrets", json={"name": "OTHER", "value": "v"}),
            client.patch(path, json={"value": "v2", "description": "d"}),
        ]
        for response in refused:
            assert response.status_code == 503, response.text
            assert response.json()["error"]["code"] == "SECRETS_KEY_MISSING"
        assert client.get(path).json()["version"] == 1
        assert client.patch(path, json={"description": "still editable"}).status_code == 200
        assert client.get("/api/v1/secrets").json()["total"] == 1
        assert client.get(path + "/accesses").status_code == 200
        assert client.post("/api/v1/agents", json={"name": "a"}).status_code == 201
        uses = {"name": "b", "execution_environment": {"secrets": ["TOKEN"]}}
        assert client.post("/api/v1/agents", json=uses).status_code == 201
        assert client.delete(path).status_code == 409  # agent b names it (docs/api-decisions.md "References")
        assert client.delete(path, params={"force": "true"}).status_code == 204


def test_keys_are_checked_at_start_without_being_quoted(tmp_path: Path) -> None:
    for bad in ("not base64 at all!", base64.b64encode(b"short").decode()):
        with pytest.raises(ConfigError) as raised:
            load_settings({"CONTROLPLANE_SECRETS_KEY": bad})
        assert bad not in str(raised.value)
        assert "CONTROLPLANE_SECRETS_KEY" in str(raised.value)
    missing = str(tmp_path / "absent-key")
    settings = load_settings({"CONTROLPLANE_DATABASE_URL": "postgresql+asyncpg://u@h/db",
                              "CONTROLPLANE_SECRETS_KEY_FILE": missing})  # fmt: skip
    with pytest.raises(ConfigError, match="absent-key"):
        build_app(settings)
    assert not Path(missing).exists()  # never made for Postgres: every node must share one key


def _cli_env(monkeypatch: pytest.MonkeyPatch, url: str, **variables: str) -> None:
    for name in ("CONTROLPLANE_SECRETS_KEY", "CONTROLPLANE_SECRETS_KEY_FILE", "CONTROLPLANE_SECRETS_NEW_KEY",
                 "CONTROLPLANE_CONFIG"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CONTROLPLANE_DATABASE_URL", url)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)


def test_rotate_key_with_a_key_file_generates_the_new_key_into_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'test.db'}"
    settings = replace(app_settings(url), secrets_key=None)
    with _client(settings) as client:
        for name in ("A", "B", "C"):
            create_secret(client, name, value=f"value of {name}")
    key_file = tmp_path / "test.db.secrets-key"
    before = key_file.read_text()
    _cli_env(monkeypatch, url)
    assert main(["secrets", "rotate-key"]) == 2  # no new key given
    assert main(["secrets", "rotate-key", "--generate"]) == 0
    assert "re-encrypted 3 secret(s)" in capsys.readouterr().out
    assert key_file.read_text() != before
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    with _client(settings) as client:
        values = client.blocking_portal.call(_reveal, client, ["A", "B", "C"], "e", "w")
    assert values == {name: f"value of {name}" for name in ("A", "B", "C")}


def test_rotate_key_with_the_key_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'test.db'}"
    with _client(app_settings(url)) as client:
        create_secret(client, "TOKEN")
    new_key = base64.b64encode(os.urandom(32)).decode()
    old_key = app_settings(url).secrets_key or ""
    _cli_env(monkeypatch, url, CONTROLPLANE_SECRETS_KEY=old_key)
    assert main(["secrets", "rotate-key", "--generate"]) == 2  # nowhere to keep a generated key
    monkeypatch.setenv("CONTROLPLANE_SECRETS_NEW_KEY", new_key)
    assert main(["secrets", "rotate-key"]) == 0
    output = capsys.readouterr().out
    assert "set CONTROLPLANE_SECRETS_KEY to the new key" in output
    assert new_key not in output
    with _client(replace(app_settings(url), secrets_key=new_key)) as client:
        assert client.blocking_portal.call(_reveal, client, ["TOKEN"], "e", "w") == {"TOKEN": VALUE}
    with _client(app_settings(url)) as client, pytest.raises(SecretUnreadable, match="sealed by key"):
        client.blocking_portal.call(_reveal, client, ["TOKEN"], "e", "w")  # the old key no longer opens it
