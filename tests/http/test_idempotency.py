"""Idempotency-Key on creating POSTs: replay, mismatch, scope, expiry; and the body size limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_domain.idempotency.entity import IdempotencyRecord
from controlplane_domain.ports import Ports
from tests.conftest import build_test_app
from tests.support import DEFAULT_ORG, SERVICE_KEY, bearer, make_jwt

CREATES = [
    ("/api/v1/agents", {"name": "a"}),
    ("/api/v1/teams", {"name": "t"}),
    ("/api/v1/models", {"value": "m", "provider": "p"}),
]  # and not API keys: test_a_new_api_keys_answer_is_never_stored


@pytest.mark.parametrize(("path", "body"), CREATES)
def test_same_key_and_body_replays_without_creating(client: TestClient[Any], path: str, body: dict[str, Any]) -> None:
    headers = {"Idempotency-Key": "k-1"}
    first = client.post(path, json=body, headers=headers)
    assert first.status_code == 201, first.text
    assert "idempotent-replayed" not in first.headers
    again = client.post(path, json=body, headers=headers)
    assert again.status_code == 201
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()
    assert client.get(path).json()["total"] == 1


def test_same_key_with_another_body_is_422(client: TestClient[Any]) -> None:
    headers = {"Idempotency-Key": "k-2"}
    assert client.post("/api/v1/agents", json={"name": "a"}, headers=headers).status_code == 201
    response = client.post("/api/v1/agents", json={"name": "b"}, headers=headers)
    assert response.status_code == 422
    body = response.json()
    assert body["error"]["code"] == "VALIDATION_ERROR"
    assert body["detail"][0]["loc"] == ["header", "Idempotency-Key"]
    other_path = client.post("/api/v1/teams", json={"name": "a"}, headers=headers)
    assert other_path.status_code == 422
    assert client.get("/api/v1/agents").json()["total"] == 1


def test_a_failed_request_is_replayed_as_it_was(client: TestClient[Any]) -> None:
    headers = {"Idempotency-Key": "k-3"}
    first = client.post("/api/v1/agents", json={"name": "a", "runtime": "nope"}, headers=headers)
    assert first.status_code == 422
    again = client.post("/api/v1/agents", json={"name": "a", "runtime": "nope"}, headers=headers)
    assert (again.status_code, again.json()) == (422, first.json())
    assert again.headers["idempotent-replayed"] == "true"


def test_keys_are_scoped_to_the_organization(client: TestClient[Any]) -> None:
    headers = {"Idempotency-Key": "shared"}
    mine = client.post("/api/v1/agents", json={"name": "a"}, headers=headers).json()
    theirs = client.post("/api/v1/agents", json={"name": "a"}, headers={**headers, **bearer(make_jwt("acme"))})
    assert theirs.status_code == 201
    assert "idempotent-replayed" not in theirs.headers
    assert theirs.json()["id"] != mine["id"]
    assert theirs.json()["organization_id"] == "acme"


def test_a_key_expires_after_24_hours(client: TestClient[Any], clock: ManualClock) -> None:
    headers = {"Idempotency-Key": "daily"}
    first = client.post("/api/v1/agents", json={"name": "a"}, headers=headers).json()
    clock.advance(24 * 3600 - 1)
    assert client.post("/api/v1/agents", json={"name": "a"}, headers=headers).json()["id"] == first["id"]
    clock.advance(2)
    late = client.post("/api/v1/agents", json={"name": "a"}, headers=headers)
    assert late.status_code == 409, "the first agent exists, so a new run of the request conflicts on its name"
    assert "idempotent-replayed" not in late.headers


def test_without_a_key_nothing_is_replayed(client: TestClient[Any]) -> None:
    assert client.post("/api/v1/agents", json={"name": "a"}).status_code == 201
    assert client.post("/api/v1/agents", json={"name": "a"}).status_code == 409


def test_a_key_longer_than_255_characters_is_422(client: TestClient[Any]) -> None:
    response = client.post("/api/v1/agents", json={"name": "a"}, headers={"Idempotency-Key": "x" * 256})
    assert response.status_code == 422


def test_bodies_over_the_limit_are_413(tmp_path: Path) -> None:
    app = build_test_app("memory", tmp_path, ManualClock(), max_body_bytes=1024)
    with TestClient(app) as client:
        client.headers.update(bearer(SERVICE_KEY))
        big = {"name": "a", "description": "x" * 2000}
        for headers in ({}, {"Idempotency-Key": "big"}):
            response = client.post("/api/v1/agents", json=big, headers=headers)
            assert response.status_code == 413, response.text
            assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
        assert client.post("/api/v1/agents", json={"name": "small"}).status_code == 201
        assert client.get("/api/v1/agents").json()["total"] == 1


def test_a_new_api_keys_answer_is_never_stored(client: TestClient[Any]) -> None:
    """Its secret is shown once and kept only hashed: the key is ignored on this route, nothing is replayed."""
    headers = {"Idempotency-Key": "k-key"}
    body = {"name": "ci", "role": "member"}
    first, second = (client.post("/api/v1/api-keys", json=body, headers=headers) for _ in range(2))
    assert (first.status_code, second.status_code) == (201, 201)
    assert "idempotent-replayed" not in second.headers
    assert first.json()["id"] != second.json()["id"]
    ports: Ports = client.app.state["ports"]

    async def stored() -> IdempotencyRecord | None:
        async with ports.read() as uow:
            return await uow.idempotency.get(DEFAULT_ORG, "k-key")

    assert client.blocking_portal.call(stored) is None
