"""Every answer carries X-Request-ID: the client's own when it is a valid one, else a new one; whoever answers."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_domain.errors import Unavailable
from controlplane_http.bootstrap import build_app
from tests.conftest import app_settings
from tests.http.test_agents import create_agent
from tests.http.test_failures import ExplodingPolicy, app_failing_with
from tests.support import BEFORE_THE_STORE, DEFAULT_ORG, SERVICE_KEY, bearer, make_jwt

GENERATED = re.compile(r"^[0-9a-f]{32}$")


def test_a_new_id_on_every_answer_and_the_clients_own_kept(client: TestClient[Any]) -> None:
    agent = create_agent(client, "identified")["id"]
    seen = set()
    requests = [
        ("GET", f"/api/v1/agents/{agent}", {}),  # the fast lane
        ("GET", "/api/v1/teams", {}),  # Litestar's path
        ("GET", "/api/v1/agents/00000000-0000-4000-8000-000000000000", {}),  # 404
        ("GET", "/api/v1/no-such-path", {}),  # no route
        ("GET", "/api/v1/teams?colour=red", {}),  # 422 after routing
        ("POST", "/api/v1/teams", {"content-type": "text/plain"}),  # 415
        ("GET", "/api/v1/teams", {"Authorization": "Bearer not-a-key"}),  # 401 before routing
        ("GET", "/api/openapi.json", {}),
        ("GET", "/metrics", {}),  # 403: the test client is not on loopback
    ]
    for method, path, headers in requests:
        response = client.request(method, path, headers=headers)
        given = response.headers.get("x-request-id", "")
        assert GENERATED.match(given), (path, response.status_code, given)
        seen.add(given)
        kept = client.request(method, path, headers={**headers, "X-Request-ID": "client-id-42:retry/1"})
        assert kept.status_code == response.status_code
        assert kept.headers["x-request-id"] == "client-id-42:retry/1"
    assert len(seen) == len(requests)


@pytest.mark.parametrize(
    "given", ["x" * 129, "has space", 'quote"d', "semi;colon", "ünïcode".encode(), b"tab\there", ""]
)
@BEFORE_THE_STORE
def test_an_invalid_client_id_is_replaced(client: TestClient[Any], given: str | bytes) -> None:
    response = client.get("/api/v1/teams", headers={"X-Request-ID": given})
    assert response.status_code == 200
    assert GENERATED.match(response.headers["x-request-id"])


def test_the_longest_client_id_is_kept(client: TestClient[Any]) -> None:
    given = "A1-_.:~+=/@" + "z" * 117
    assert len(given) == 128
    assert client.get("/api/v1/teams", headers={"X-Request-ID": given}).headers["x-request-id"] == given


def test_a_rate_limited_answer_carries_it() -> None:
    with TestClient(build_app(app_settings("memory://", rate_limit=2))) as client:
        client.headers.update(bearer(make_jwt(DEFAULT_ORG)))  # (a tenant's key: the service key has its own figure)
        answers = [client.get("/api/v1/teams", headers={"X-Request-ID": f"r-{i}"}) for i in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert [a.headers["x-request-id"] for a in answers] == ["r-0", "r-1", "r-2"]


@pytest.mark.parametrize(
    ("failing", "path"),
    [
        (lambda: app_failing_with(ZeroDivisionError("boom")), "/api/v1/agents"),
        (lambda: app_failing_with(ZeroDivisionError("boom")), "/api/v1/teams"),
        (lambda: app_failing_with(Unavailable("x"), policy=ExplodingPolicy), "/api/v1/no-such-path"),
    ],
    ids=["fast lane", "Litestar", "before routing"],
)
def test_a_500_names_the_requests_own_id_once(failing: Any, path: str) -> None:
    with failing() as client:
        response = client.get(path, headers={**bearer(SERVICE_KEY), "X-Request-ID": "trace-me-500"})
    assert response.status_code == 500
    assert response.headers.get_list("x-request-id") == ["trace-me-500"]
    assert response.json()["error"]["details"]["request_id"] == "trace-me-500"
