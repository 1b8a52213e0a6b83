"""API keys: shown once, stored as a hash, roles enforced, revocation effective on the next request."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.http.test_agents import assert_validation
from tests.http.test_auth import UNAUTHORIZED
from tests.support import bearer, make_jwt


def issue(client: TestClient[Any], role: str = "member", **fields: Any) -> dict[str, Any]:
    response = client.post("/api/v1/api-keys", json={"name": f"{role}-key", "role": role, **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_key_is_shown_once_and_never_its_hash(client: TestClient[Any]) -> None:
    created = issue(client)
    assert created["key"].startswith(f"cpk_{created['id']}_")
    assert created["role"] == "member"
    assert created["revoked_at"] is None
    listed = client.get("/api/v1/api-keys").json()
    fetched = client.get(f"/api/v1/api-keys/{created['id']}").json()
    secret = created["key"].split("_", 2)[2]
    for shown in (listed, fetched):
        assert created["key"] not in str(shown)
        assert secret not in str(shown)
        assert "hash" not in str(shown)
    assert fetched == {name: value for name, value in created.items() if name != "key"}
    assert listed["total"] == 1


def test_a_key_acts_in_its_organization_with_its_role(client: TestClient[Any]) -> None:
    member = bearer(issue(client, "member")["key"])
    viewer = bearer(issue(client, "viewer")["key"])
    agent = client.post("/api/v1/agents", json={"name": "by-key"}, headers=member)
    assert agent.status_code == 201
    assert agent.json()["organization_id"] == "default"
    assert client.get("/api/v1/agents", headers=viewer).json()["total"] == 1
    denied = client.post("/api/v1/agents", json={"name": "nope"}, headers=viewer)
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "FORBIDDEN"
    assert client.get("/api/v1/api-keys", headers=member).status_code == 403
    assert client.post("/api/v1/api-keys", json={"name": "x"}, headers=member).status_code == 403


def test_revocation_is_effective_on_the_next_request(client: TestClient[Any]) -> None:
    created = issue(client)
    key = bearer(created["key"])
    assert client.get("/api/v1/agents", headers=key).status_code == 200
    assert client.delete(f"/api/v1/api-keys/{created['id']}").status_code == 204
    response = client.get("/api/v1/agents", headers=key)
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED
    assert client.get(f"/api/v1/api-keys/{created['id']}").json()["revoked_at"] is not None
    assert client.delete(f"/api/v1/api-keys/{created['id']}").status_code == 204


def test_an_expired_key_is_refused(client: TestClient[Any], clock: Any) -> None:
    expires = clock.now() + timedelta(hours=1)
    key = bearer(issue(client, expires_at=expires.isoformat())["key"])
    assert client.get("/api/v1/agents", headers=key).status_code == 200
    clock.advance(3601)
    assert client.get("/api/v1/agents", headers=key).json() == UNAUTHORIZED
    past = (clock.now() - timedelta(seconds=1)).isoformat()
    refused = client.post("/api/v1/api-keys", json={"name": "late", "expires_at": past})
    assert refused.status_code == 422


@pytest.mark.parametrize(
    "token",
    ["cpk_", "cpk_abc", "cpk_nothex_secret", "cpk_0123456789abcdef01234567_wrong-secret", "cpk__x"],
)
def test_malformed_or_unknown_keys_are_401(client: TestClient[Any], token: str) -> None:
    issue(client)
    assert client.get("/api/v1/agents", headers=bearer(token)).json() == UNAUTHORIZED


def test_a_tampered_secret_is_refused(client: TestClient[Any]) -> None:
    key = issue(client)["key"]
    tampered = key[:-1] + ("A" if key[-1] != "A" else "B")
    assert client.get("/api/v1/agents", headers=bearer(tampered)).json() == UNAUTHORIZED


def test_keys_are_per_organization(client: TestClient[Any]) -> None:
    created = issue(client)
    admin_elsewhere = bearer(make_jwt("acme", roles=["admin"]))
    assert client.get(f"/api/v1/api-keys/{created['id']}", headers=admin_elsewhere).status_code == 404
    assert client.delete(f"/api/v1/api-keys/{created['id']}", headers=admin_elsewhere).status_code == 404
    assert client.get("/api/v1/api-keys", headers=admin_elsewhere).json()["total"] == 0
    assert client.get("/api/v1/agents", headers=bearer(created["key"])).status_code == 200


def test_a_role_cannot_be_exceeded_and_names_are_required(client: TestClient[Any]) -> None:
    assert client.post("/api/v1/api-keys", json={"name": "", "role": "admin"}).status_code == 422
    assert client.post("/api/v1/api-keys", json={"name": "k", "role": "root"}).status_code == 422
    admin_key = bearer(issue(client, "admin")["key"])
    assert client.post("/api/v1/api-keys", json={"name": "k2", "role": "viewer"}, headers=admin_key).status_code == 201


def test_jwt_not_yet_valid_is_401(client: TestClient[Any]) -> None:
    token = make_jwt("acme", nbf=int(time.time()) + 3600)
    assert client.get("/api/v1/agents", headers=bearer(token)).json() == UNAUTHORIZED


def test_an_expiry_without_a_utc_offset_is_422(client: TestClient[Any]) -> None:
    response = client.post("/api/v1/api-keys", json={"name": "k", "expires_at": "2099-01-01T00:00:00"})
    assert_validation(response, ["body", "expires_at"])


def test_expiry_dates_are_returned_in_utc(client: TestClient[Any]) -> None:
    when = datetime(2099, 1, 1, 12, tzinfo=UTC)
    created = issue(client, expires_at=when.isoformat())
    assert created["expires_at"].startswith("2099-01-01T12:00:00")


def test_whoami_names_the_callers_organization_subject_and_role(client: TestClient[Any]) -> None:
    """The console asks it at sign-in to offer only what the role may do; any role may ask, a worker key too is
    told it is one (and the console refuses it), a stranger is 401."""
    assert client.get("/api/v1/whoami").json() == {
        "organization_id": "default", "subject": "service", "role": "admin", "method": "api_key",
    }  # fmt: skip
    viewer = issue(client, "viewer")
    assert client.get("/api/v1/whoami", headers=bearer(viewer["key"])).json() == {
        "organization_id": "default", "subject": f"api-key:{viewer['id']}", "role": "viewer", "method": "api_key",
    }  # fmt: skip
    jwt = make_jwt("acme", sub="ada", roles=["member"])
    assert client.get("/api/v1/whoami", headers=bearer(jwt)).json() == {
        "organization_id": "acme", "subject": "ada", "role": "member", "method": "jwt",
    }  # fmt: skip
    assert client.get("/api/v1/whoami", headers=bearer("nope")).status_code == 401
