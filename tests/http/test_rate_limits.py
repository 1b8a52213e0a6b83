"""Rate limits: headers on every response, 429 past the limit, tiers, worker budget, Redis shared counters."""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.settings.model import Settings
from controlplane_http.bootstrap import build_app
from tests.conftest import app_settings, build_test_app
from tests.support import DEFAULT_ORG, SERVICE_KEY, bearer, make_jwt

HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


MEMBER = bearer(make_jwt(DEFAULT_ORG, sub="member"))
"""A member of the default organization: a tenant's credential, held to its organization's tier."""


def limited_client(tmp_path: Path, store: str = "memory", **options: Any) -> TestClient[Any]:
    """A client of an app with the given figures, calling as MEMBER (the service key has a figure of its own)."""
    options.setdefault("redis_namespace", f"test-{uuid.uuid4().hex}")
    app = build_test_app(store, tmp_path, ManualClock(), **options)
    client = TestClient(app)
    client.headers.update(MEMBER)
    return client


@pytest.fixture(params=["memory", "redis"])
def limiter_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "redis":
        return {"redis_url": request.getfixturevalue("redis")}
    return {}


def test_every_response_carries_the_headers(tmp_path: Path, limiter_options: dict[str, Any]) -> None:
    with limited_client(tmp_path, rate_limit=50, **limiter_options) as client:
        responses = [
            client.get("/api/v1/agents"),
            client.post("/api/v1/agents", json={}),
            client.get("/api/v1/agents/missing"),
            client.get("/api/v1/agents", headers=bearer("wrong")),
            client.get("/api/openapi.json"),
        ]
        assert [r.status_code for r in responses] == [200, 422, 404, 401, 200]
        for response in responses:
            assert all(name in response.headers for name in HEADERS), response.headers
        first, second = responses[0], responses[1]
        assert first.headers["x-ratelimit-limit"] == "50"
        assert int(second.headers["x-ratelimit-remaining"]) == int(first.headers["x-ratelimit-remaining"]) - 1
        reset = int(first.headers["x-ratelimit-reset"])
        assert time.time() < reset <= time.time() + 61


def test_over_the_limit_is_429_with_retry_after(tmp_path: Path, limiter_options: dict[str, Any]) -> None:
    with limited_client(tmp_path, rate_limit=5, **limiter_options) as client:
        statuses = [client.get("/api/v1/agents").status_code for _ in range(5)]
        assert statuses == [200] * 5
        refused = client.get("/api/v1/agents")
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "RATE_LIMITED"
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert refused.headers["x-ratelimit-remaining"] == "0"
        other_credential = client.get("/api/v1/agents", headers=bearer(make_jwt(DEFAULT_ORG, sub="another")))
        assert other_credential.status_code == 200, "limits are per credential"


def test_unknown_paths_and_methods_are_authenticated_and_counted(tmp_path: Path) -> None:
    """Routing comes after authentication and rate limits: probing paths needs credentials and spends budget."""
    with limited_client(tmp_path, rate_limit=3) as client:
        anonymous = client.get("/api/v1/no-such-area", headers={"Authorization": ""})
        assert anonymous.status_code == 401
        assert anonymous.headers["www-authenticate"].startswith("Bearer")
        statuses = [client.get("/api/v1/no-such-area").status_code, client.put("/api/v1/agents").status_code]
        assert statuses == [404, 405]
        assert client.get("/api/v1/agents").headers["x-ratelimit-remaining"] == "0"
        refused = client.get("/api/v1/no-such-area")
        assert refused.status_code == 429
        assert all(name in refused.headers for name in HEADERS)


def test_worker_traffic_has_its_own_budget(tmp_path: Path) -> None:
    with limited_client(tmp_path, rate_limit=3, worker_rate_limit=10) as client:
        for _ in range(3):
            assert client.get("/api/v1/agents").status_code == 200
        assert client.get("/api/v1/agents").status_code == 429
        beat = {"worker_id": "w", "environment_name": "e"}
        responses = [client.post("/api/v1/workers/heartbeat", json=beat) for _ in range(10)]
        assert [r.status_code for r in responses] == [200] * 10
        assert responses[0].headers["x-ratelimit-limit"] == "10"
        assert client.post("/api/v1/workers/heartbeat", json=beat).status_code == 429
        assert client.get("/api/v1/workers").status_code == 429, "reading workers is API traffic"


def test_enterprise_figure_is_set_by_an_operator(tmp_path: Path) -> None:
    with limited_client(tmp_path, rate_limit=100) as client:
        acme_admin = bearer(make_jwt("acme", roles=["admin"]))
        forbidden = client.put(
            "/api/v1/organizations/acme/settings", json={"tier": "enterprise", "rate_limit_per_minute": 5000},
            headers=acme_admin,
        )  # fmt: skip
        assert forbidden.status_code == 403
        assert client.get("/api/v1/organizations/other/settings", headers=acme_admin).status_code == 404
        standard = client.get("/api/v1/organizations/acme/settings", headers=acme_admin).json()
        assert (standard["tier"], standard["effective_rate_limit_per_minute"]) == ("standard", 100)
        updated = client.put(
            "/api/v1/organizations/acme/settings",
            json={"tier": "enterprise", "rate_limit_per_minute": 3},
            headers=bearer(SERVICE_KEY),
        )
        assert updated.status_code == 200, updated.text
        assert updated.json()["effective_rate_limit_per_minute"] == 3
        member = bearer(make_jwt("acme", sub="someone"))
        statuses = [client.get("/api/v1/agents", headers=member).status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        assert client.get("/api/v1/agents").status_code == 200, "the default organization keeps the standard tier"
        missing_figure = client.put(
            "/api/v1/organizations/acme/settings", json={"tier": "enterprise"}, headers=bearer(SERVICE_KEY)
        )
        assert missing_figure.status_code == 422


def test_organizations_and_subjects_never_share_a_bucket(tmp_path: Path) -> None:
    with limited_client(tmp_path, rate_limit=2) as client:
        first = bearer(make_jwt("a", sub="b:c"))
        for _ in range(2):
            assert client.get("/api/v1/agents", headers=first).status_code == 200
        assert client.get("/api/v1/agents", headers=first).status_code == 429
        other = client.get("/api/v1/agents", headers=bearer(make_jwt("a:b", sub="c")))
        assert other.status_code == 200
        assert other.headers["x-ratelimit-remaining"] == "1"


def service_client(tmp_path: Path, **figures: int) -> TestClient[Any]:
    """An app with the standard tier at `rate_limit` (and the service key's figure when given), as the service key."""
    service = figures.pop("service", None)
    settings = app_settings("memory://", **figures)
    if service is not None:
        settings = replace(settings, service_rate_limit_per_minute=service)
    client = TestClient(build_app(settings, clock=ManualClock()))
    client.headers.update(bearer(SERVICE_KEY))
    return client


def test_the_service_key_is_not_held_to_the_tenant_tier(tmp_path: Path) -> None:
    """The standard tier's 100 a minute: the default organization's member is refused the 101st request, while the
    operator's key goes on at its own default figure (100,000 a minute)."""
    assert Settings().rate_limit_per_minute == 100
    assert Settings().service_rate_limit_per_minute == 100_000
    with service_client(tmp_path, rate_limit=Settings().rate_limit_per_minute) as client:
        member = [client.get("/api/v1/agents", headers=MEMBER) for _ in range(101)]
        assert [answer.status_code for answer in member] == [200] * 100 + [429]
        assert member[0].headers["x-ratelimit-limit"] == "100"
        service = [client.get("/api/v1/agents") for _ in range(150)]
        assert [answer.status_code for answer in service] == [200] * 150
        assert service[-1].headers["x-ratelimit-limit"] == "100000"
        assert service[-1].headers["x-ratelimit-remaining"] == str(100_000 - 150)
        beat = client.post("/api/v1/workers/heartbeat", json={"worker_id": "w", "environment_name": "e"})
        assert (beat.status_code, beat.headers["x-ratelimit-limit"]) == (200, "100000"), "its worker traffic too"
        assert client.get("/api/v1/agents", headers=MEMBER).status_code == 429, "the member is still limited"


def test_the_service_keys_figure_is_a_setting_and_still_a_limit(tmp_path: Path) -> None:
    with service_client(tmp_path, rate_limit=2, service=6) as client:
        statuses = [client.get("/api/v1/agents").status_code for _ in range(7)]
        assert statuses == [200] * 6 + [429]
        assert [client.get("/api/v1/agents", headers=MEMBER).status_code for _ in range(3)] == [200, 200, 429]


def test_an_organizations_enterprise_figure_does_not_apply_to_the_service_key(tmp_path: Path) -> None:
    with service_client(tmp_path, rate_limit=100, service=8) as client:
        figure = {"tier": "enterprise", "rate_limit_per_minute": 2}
        assert client.put(f"/api/v1/organizations/{DEFAULT_ORG}/settings", json=figure).status_code == 200
        assert [client.get("/api/v1/agents", headers=MEMBER).status_code for _ in range(3)] == [200, 200, 429]
        answers = [client.get("/api/v1/agents") for _ in range(6)]
        assert [answer.status_code for answer in answers] == [200] * 6
        assert answers[0].headers["x-ratelimit-limit"] == "8"
