"""Authentication and roles: every failure is the same 401; roles gate writes."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.conftest import build_test_app
from tests.support import BEFORE_THE_STORE, JWT_SECRET, SERVICE_KEY, bearer, make_jwt

UNAUTHORIZED = {"error": {"code": "UNAUTHORIZED", "message": "invalid or missing credentials", "details": {}}}


def _unsigned(payload: dict[str, Any]) -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(payload)}."


BAD_CREDENTIALS = {
    "no header": {},
    "wrong api key": bearer("not-the-key"),
    "basic scheme": {"Authorization": f"Basic {SERVICE_KEY}"},
    "empty bearer": {"Authorization": "Bearer "},
    "expired jwt": bearer(make_jwt("acme", expires_in=-3600)),
    "wrong signature": bearer(make_jwt("acme", secret="another-secret-of-at-least-32-bytes")),
    "alg none": bearer(_unsigned({"sub": "u", "org_id": "acme", "exp": int(time.time()) + 600})),
    "hs512": bearer(make_jwt("acme", algorithm="HS512")),
    "malformed jwt": bearer("abc.def.ghi"),
    "exp beyond a float": bearer(make_jwt("acme", expires_in=10**400)),  # signed, but no time
    "token over 8 KiB": bearer(make_jwt("acme", padding="x" * 8192)),  # signed, but refused unread
}


@pytest.mark.parametrize("headers", BAD_CREDENTIALS.values(), ids=BAD_CREDENTIALS.keys())
@BEFORE_THE_STORE
def test_bad_credentials_are_401_with_one_body(client: TestClient[Any], headers: dict[str, str]) -> None:
    client.headers.pop("Authorization", None)
    for path in ("/api/v1/agents", "/api/health", "/api/v1/teams/any"):
        response = client.get(path, headers=headers)
        assert response.status_code == 401, (path, response.text)
        assert response.json() == UNAUTHORIZED
        assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize("missing", ["sub", "org_id", "exp"])
@BEFORE_THE_STORE
def test_jwt_without_a_required_claim_is_401(client: TestClient[Any], missing: str) -> None:
    import jwt

    claims = {"sub": "u", "org_id": "acme", "exp": int(time.time()) + 600}
    del claims[missing]
    token = jwt.encode(claims, JWT_SECRET, algorithm="HS256")
    response = client.get("/api/v1/agents", headers=bearer(token))
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED


def test_a_jwt_acts_in_its_organization(client: TestClient[Any]) -> None:
    token = bearer(make_jwt("acme"))
    created = client.post("/api/v1/agents", json={"name": "a"}, headers=token)
    assert created.status_code == 201
    assert created.json()["organization_id"] == "acme"
    assert client.get("/api/v1/agents").json()["total"] == 0


def test_viewer_reads_but_cannot_write(client: TestClient[Any]) -> None:
    viewer = bearer(make_jwt("acme", roles=["viewer"]))
    assert client.get("/api/v1/agents", headers=viewer).status_code == 200
    response = client.post("/api/v1/agents", json={"name": "a"}, headers=viewer)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "FORBIDDEN"
    member = bearer(make_jwt("acme", roles=["member"]))
    assert client.post("/api/v1/agents", json={"name": "a"}, headers=member).status_code == 201


def test_unknown_path_and_method_use_the_envelope(client: TestClient[Any]) -> None:
    missing = client.get("/api/v1/nothing-here")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "NOT_FOUND"
    wrong = client.put("/api/v1/agents")
    assert wrong.status_code == 405
    assert wrong.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


def _client(tmp_path: Path, **auth: Any) -> TestClient[Any]:
    return TestClient(build_test_app("memory", tmp_path, ManualClock(), **auth))


def test_auth_not_required_acts_as_the_default_organization(tmp_path: Path) -> None:
    with _client(tmp_path, required=False) as client:
        response = client.post("/api/v1/agents", json={"name": "dev"})
        assert response.status_code == 201
        assert response.json()["organization_id"] == "default"
        assert client.get("/api/v1/agents", headers=bearer("wrong")).status_code == 401


def test_methods_can_turn_api_keys_or_jwts_off(tmp_path: Path) -> None:
    with _client(tmp_path, methods=frozenset({"jwt"})) as client:
        assert client.get("/api/v1/agents", headers=bearer(SERVICE_KEY)).status_code == 401
        assert client.get("/api/v1/agents", headers=bearer(make_jwt("acme"))).status_code == 200
    with _client(tmp_path, methods=frozenset({"api_key"})) as client:
        assert client.get("/api/v1/agents", headers=bearer(SERVICE_KEY)).status_code == 200
        assert client.get("/api/v1/agents", headers=bearer(make_jwt("acme"))).status_code == 401


def test_api_key_header_can_be_renamed(tmp_path: Path) -> None:
    with _client(tmp_path, api_key_header="X-API-Key") as client:
        assert client.get("/api/v1/agents", headers={"X-API-Key": SERVICE_KEY}).status_code == 200
        assert client.get("/api/v1/agents", headers={"X-API-Key": "nope"}).status_code == 401
        assert client.get("/api/v1/agents", headers=bearer(make_jwt("acme"))).status_code == 200


def test_audience_and_issuer_are_checked_when_configured(tmp_path: Path) -> None:
    with _client(tmp_path, jwt_audience="controlplane", jwt_issuer="https://idp") as client:
        good = make_jwt("acme", aud="controlplane", iss="https://idp")
        assert client.get("/api/v1/agents", headers=bearer(good)).status_code == 200
        for token in (
            make_jwt("acme", aud="other", iss="https://idp"),
            make_jwt("acme", aud="controlplane", iss="https://evil"),
            make_jwt("acme"),
        ):
            assert client.get("/api/v1/agents", headers=bearer(token)).json() == UNAUTHORIZED


def test_a_viewer_gets_403_on_its_own_objects_and_404_on_others(client: TestClient[Any]) -> None:
    agent = client.post("/api/v1/agents", json={"name": "mine"}).json()
    own_viewer = bearer(make_jwt("default", sub="reader", roles=["viewer"]))
    foreign_viewer = bearer(make_jwt("acme", sub="reader", roles=["viewer"]))
    assert client.patch(f"/api/v1/agents/{agent['id']}", json={"name": "x"}, headers=own_viewer).status_code == 403
    assert client.patch(f"/api/v1/agents/{agent['id']}", json={"name": "x"}, headers=foreign_viewer).status_code == 404
    assert client.patch("/api/v1/agents/no-such-agent", json={"name": "x"}, headers=own_viewer).status_code == 404
