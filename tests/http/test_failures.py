"""Failures inside the service: a 500 carries a request id and never a traceback; a dead database is 503."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

import pytest
from litestar.testing import TestClient

from controlplane_adapters.auth import CredentialVerifier, ServiceKeyVerifier, Sha256SecretHasher
from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.ratelimit import RateLimiter
from controlplane_adapters.settings.model import AuthSettings
from controlplane_domain.errors import Unavailable
from controlplane_domain.ports import Ports
from controlplane_http.app import create_app
from controlplane_http.limits import LimitPolicy
from tests.support import SERVICE_KEY, bearer


class BrokenUnitOfWork:
    """A store whose every transaction fails the way the given exception says."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def __aenter__(self) -> Self:
        raise self.error

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None


class Probe:
    def __init__(self, ok: bool) -> None:
        self.ok = ok

    async def database_ok(self) -> bool:
        return self.ok


class StandardOnly(LimitPolicy):
    """Standard figures without asking the (broken) store for organization settings."""

    async def api(self, organization_id: str) -> int:
        return self.standard_per_minute


class ExplodingPolicy(LimitPolicy):
    """Reading the caller's figures fails in a way nobody expected (before routing, outside Litestar)."""

    async def api(self, organization_id: str) -> int:
        raise ZeroDivisionError("secret internals")

    def service(self) -> int:  # (the service key's figure: these tests call with it)
        raise ZeroDivisionError("secret internals")


def app_failing_with(
    error: Exception, database_ok: bool = True, policy: type[LimitPolicy] = StandardOnly
) -> TestClient[Any]:
    auth = AuthSettings()
    ports = Ports(uow=lambda: BrokenUnitOfWork(error), clock=ManualClock(), ids=UuidGenerator())  # type: ignore[arg-type,return-value]
    app = create_app(
        ports=ports,
        verifier=CredentialVerifier(auth, ServiceKeyVerifier(SERVICE_KEY, "default")),
        health_probe=Probe(database_ok),
        auth=auth,
        policy=policy(ports=ports, hasher=Sha256SecretHasher()),
        limiter=RateLimiter(),
    )
    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize(
    ("failing", "path"),
    [
        (lambda: app_failing_with(ZeroDivisionError("secret internals")), "/api/v1/agents"),  # in the fast lane
        (lambda: app_failing_with(ZeroDivisionError("secret internals")), "/api/v1/teams"),
        # before routing, outside Litestar's exception handling: reading the caller's rate-limit figures fails
        (lambda: app_failing_with(Unavailable("x"), policy=ExplodingPolicy), "/api/v1/no-such-path"),
    ],
    ids=["in a handler served by the fast lane", "in a handler served by Litestar", "before routing"],
)
def test_an_unexpected_error_is_500_without_a_traceback(failing: Callable[[], TestClient[Any]], path: str) -> None:
    with failing() as client:
        response = client.get(path, headers=bearer(SERVICE_KEY))
    assert response.status_code == 500
    body = response.json()
    assert body["error"]["code"] == "INTERNAL_ERROR"
    assert body["error"]["details"]["request_id"] == response.headers["x-request-id"]
    assert "Traceback" not in response.text
    assert "secret internals" not in response.text
    assert "ZeroDivisionError" not in response.text


def test_an_unavailable_database_is_503() -> None:
    with app_failing_with(Unavailable("the database is unavailable"), database_ok=False) as client:
        response = client.post("/api/v1/agents", json={"name": "a"}, headers=bearer(SERVICE_KEY))
        assert response.status_code == 503
        assert client.get("/api/v1/agents/a-1", headers=bearer(SERVICE_KEY)).status_code == 503  # fast lane
        assert response.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
        health = client.get("/api/health", headers=bearer(SERVICE_KEY))
    assert health.status_code == 503
    body = health.json()
    assert body["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert body["error"]["details"]["version"] == "v0.3.0"
    assert body["error"]["details"]["database"]["status"] == "unavailable"
