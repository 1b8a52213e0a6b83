"""Integrations' secret fields at rest: never plaintext in the SQLite files (nor the idempotency records), 503
SECRETS_KEY_MISSING without a key on Postgres for writes that carry them, and `controlplane secrets rotate-key`."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import app_settings
from tests.databases import truncate
from tests.http.test_integrations import TOKEN, create_integration, resolve
from tests.http.test_secret_storage import _cli_env, _client, _files
from tests.http.test_secrets import create_secret


def test_the_sqlite_files_never_hold_a_secret_field(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'test.db'}"
    second = TOKEN + "-second"
    with _client(app_settings(url)) as client:
        body = {"name": "gh", "kind": "github", "configuration": {"token": TOKEN, "organization": "stored-as-is"}}
        created = client.post("/api/v1/integrations", json=body, headers={"Idempotency-Key": "k1"})
        assert created.status_code == 201, created.text
        assert (
            client.post("/api/v1/integrations", json=body, headers={"Idempotency-Key": "k1"}).json() == created.json()
        )
        path = f"/api/v1/integrations/{created.json()['id']}"
        assert client.patch(path, json={"configuration": {"token": second}}).status_code == 200
        assert resolve(client, [created.json()["id"]]).env_vars == {"GITHUB_TOKEN": second}
    stored = _files(tmp_path, "test.db")
    assert b"stored-as-is" in stored  # the test reads what the database holds
    fingerprint = hashlib.sha256(b"POST /api/v1/integrations\n" + created.request.content).hexdigest()
    for plaintext in (TOKEN, second):
        assert plaintext.encode() not in stored
        assert base64.b64encode(plaintext.encode()) not in stored
    assert fingerprint.encode() not in stored


def test_postgres_without_a_key_refuses_secret_fields_and_nothing_else(postgres_url: str) -> None:
    asyncio.run(truncate(postgres_url))
    with _client(app_settings(postgres_url)) as client:
        github = create_integration(client)
    with _client(replace(app_settings(postgres_url), secrets_key=None)) as client:
        path = f"/api/v1/integrations/{github['id']}"
        refused = [
            client.post("/api/v1/integrations", json={"name": "x", "kind": "github", "configuration": {"token": "t"}}),
            client.patch(path, json={"configuration": {"token": "new"}}),
            client.patch(path, json={"configuration": {"token": "********"}}),
            client.patch(path, json={"kind": "gitlab"}),
        ]
        for response in refused:
            assert response.status_code == 503, response.text
            assert response.json()["error"]["code"] == "SECRETS_KEY_MISSING"
        assert client.get(path).json() == github
        renamed = client.patch(path, json={"name": "renamed", "enabled": False})
        assert (renamed.status_code, renamed.json()["configuration"]) == (200, {"token": "********"})
        plain = {"name": "api", "kind": "http", "configuration": {"base_url": "https://a.example"}}
        assert client.post("/api/v1/integrations", json=plain).status_code == 201
        assert client.post("/api/v1/custom-integrations", json={"name": "c"}).status_code == 201
        assert client.delete(path).status_code == 204


def test_rotate_key_reseals_integrations_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from controlplane_http.cli import main

    url = f"sqlite+aiosqlite:///{tmp_path / 'test.db'}"
    settings = replace(app_settings(url), secrets_key=None)
    with _client(settings) as client:
        create_secret(client, "A")
        ids = [create_integration(client, f"gh{n}", configuration={"token": f"token {n}"})["id"] for n in range(3)]
        create_integration(client, "plain", "http", {"base_url": "https://a.example"})
    _cli_env(monkeypatch, url)
    assert main(["secrets", "rotate-key", "--generate"]) == 0
    assert (
        "re-encrypted 1 secret(s), the secret fields of 3 integration(s) and the signing secrets of 0 webhook(s)"
        in capsys.readouterr().out
    )
    with _client(settings) as client:  # the key file now holds the new key
        assert [resolve(client, [one]).env_vars["GITHUB_TOKEN"] for one in ids] == ["token 0", "token 1", "token 2"]
