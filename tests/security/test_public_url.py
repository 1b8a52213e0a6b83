"""A webhook job's `webhook_url` starts with the configured public URL, never with what the request's `Host` says
(issue #31): a caller who picks the header must not pick where others are told to send the job's webhooks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.settings.loading import load_settings
from controlplane_adapters.settings.model import ConfigError, Settings
from controlplane_http.bootstrap import build_app
from tests.conftest import app_settings
from tests.http.test_jobs import job_body
from tests.support import SERVICE_KEY, bearer

EVIL = "evil.example"


def client_with(tmp_path: Path, **settings: Any) -> Iterator[TestClient[Any]]:
    app = build_app(replace(app_settings("memory://"), **settings))
    with TestClient(app, base_url="http://testserver.local") as client:
        client.headers.update(bearer(SERVICE_KEY))
        yield client


@pytest.fixture
def configured(tmp_path: Path) -> Iterator[TestClient[Any]]:
    yield from client_with(tmp_path, public_url="https://cp.example.com/control")


def webhook_job_through(client: TestClient[Any], host: str) -> dict[str, Any]:
    body = job_body(client, "on-push", trigger={"type": "webhook"}, prompt="review {{payload.after}}")
    response = client.post("/api/v1/jobs", json=body, headers={"Host": host, "X-Forwarded-Host": host})
    assert response.status_code == 201, response.text
    job: dict[str, Any] = response.json()
    return job


def test_the_host_header_does_not_come_back_in_the_webhook_url(configured: TestClient[Any]) -> None:
    job = webhook_job_through(configured, EVIL)
    assert job["webhook_url"] == f"https://cp.example.com/control/api/v1/webhooks/jobs/{job['id']}"
    for path in (f"/api/v1/jobs/{job['id']}", "/api/v1/jobs"):
        answer = configured.get(path, headers={"Host": EVIL})
        assert answer.status_code == 200
        assert EVIL not in answer.text
        assert "https://cp.example.com/control/api/v1/webhooks/jobs/" in answer.text
    patched = configured.patch(f"/api/v1/jobs/{job['id']}", json={"prompt": "again"}, headers={"Host": EVIL})
    assert (patched.status_code, patched.json()["webhook_url"]) == (200, job["webhook_url"])


def test_without_a_public_url_the_bound_address_is_the_base(tmp_path: Path) -> None:
    for client in client_with(tmp_path, host="0.0.0.0", port=9123):  # noqa: S104 - (a wildcard bind's base)
        job = webhook_job_through(client, EVIL)
        assert job["webhook_url"] == f"http://127.0.0.1:9123/api/v1/webhooks/jobs/{job['id']}"


def test_the_setting_is_read_and_checked() -> None:
    assert Settings().public_base_url == "http://127.0.0.1:8001"
    assert Settings(host="::", port=80).public_base_url == "http://[::1]:80"
    assert Settings(host="cp.internal").public_base_url == "http://cp.internal:8001"
    loaded = load_settings({"CONTROLPLANE_PUBLIC_URL": "https://cp.example.com/"})
    assert loaded.public_base_url == "https://cp.example.com"
    assert load_settings({"CONTROLPLANE_PUBLIC_URL": ""}).public_url is None
    for bad in ("cp.example.com", "ftp://cp.example.com", "https://", "https://cp.example.com/?a=1", "http://h:x/"):
        with pytest.raises(ConfigError, match="CONTROLPLANE_PUBLIC_URL"):
            load_settings({"CONTROLPLANE_PUBLIC_URL": bad})


def test_the_configuration_file_takes_it_too(tmp_path: Path) -> None:
    config = tmp_path / "controlplane.yaml"
    config.write_text("server:\n  public_url: https://cp.example.com:8443\n", encoding="utf-8")
    assert load_settings({}, str(config)).public_base_url == "https://cp.example.com:8443"
    config.write_text("server:\n  public_url: not a url\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"server\.public_url"):
        load_settings({}, str(config))
