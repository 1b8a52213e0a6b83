"""Fixtures: HTTP clients over the in-process app on every store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.settings import AuthSettings, Settings
from controlplane_http.bootstrap import build_app
from tests.support import DEFAULT_ORG, JWT_SECRET, SERVICE_KEY, bearer, make_jwt

BACKENDS = ["memory", "sqlite"]


def app_settings(database_url: str, **auth: object) -> Settings:
    return Settings(
        database_url=database_url,
        service_api_key=SERVICE_KEY,
        default_organization=DEFAULT_ORG,
        auth=AuthSettings(jwt_secret=JWT_SECRET, **auth),  # type: ignore[arg-type]
    )


def build_test_app(backend: str, tmp_path: Path, clock: ManualClock, **auth: object) -> Litestar:
    url = "memory://" if backend == "memory" else f"sqlite+aiosqlite:///{tmp_path / 'test.db'}"
    return build_app(app_settings(url, **auth), clock=clock)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=BACKENDS)
def client(request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock) -> Iterator[TestClient]:  # type: ignore[type-arg]
    app = build_test_app(request.param, tmp_path, clock)
    with TestClient(app) as test_client:
        test_client.headers.update(bearer(SERVICE_KEY))
        yield test_client


@pytest.fixture
def other_org() -> dict[str, str]:
    """Headers of a member of another organization."""
    return bearer(make_jwt("org-other", sub="intruder"))
