"""Secrets over HTTP, on every store: the value is write-only, the rules, versions, roles, references, accesses."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from controlplane_domain.secrets.reveal import reveal_for_lease
from tests.http.test_agents import assert_validation, create_agent
from tests.support import bearer, make_jwt

SECRET_FIELDS = {
    "id", "organization_id", "name", "description", "version", "created_at", "updated_at", "last_accessed_at",
}  # fmt: skip
VALUE = "sk-live-0123456789-do-not-leak"


def create_secret(client: TestClient[Any], name: str = "OPENAI_API_KEY", value: str = VALUE, **fields: Any) -> Any:
    response = client.post("/api/v1/secrets", json={"name": name, "value": value, **fields})
    assert response.status_code == 201, response.text
    return response.json()


def test_create_answers_the_metadata_and_never_the_value(client: TestClient[Any]) -> None:
    created = client.post("/api/v1/secrets", json={"name": "OPENAI_API_KEY", "value": VALUE, "description": "d"})
    assert created.status_code == 201, created.text
    body = created.json()
    assert set(body) == SECRET_FIELDS
    assert (body["name"], body["description"], body["version"], body["last_accessed_at"]) == (
        "OPENAI_API_KEY", "d", 1, None,
    )  # fmt: skip
    assert body["organization_id"] == "default"
    answers = [
        created,
        client.get(f"/api/v1/secrets/{body['id']}"),
        client.get("/api/v1/secrets"),
        client.patch(f"/api/v1/secrets/{body['id']}", json={"value": VALUE + "2"}),
        client.get(f"/api/v1/secrets/{body['id']}/accesses"),
    ]
    assert [answer.status_code for answer in answers] == [201, 200, 200, 200, 200]
    assert all(VALUE not in answer.text and "value" not in answer.json() for answer in answers)
    assert client.get("/api/v1/secrets").json()["items"][0]["id"] == body["id"]


def test_version_grows_with_each_value_and_only_then(client: TestClient[Any]) -> None:
    secret = create_secret(client)
    path = f"/api/v1/secrets/{secret['id']}"
    described = client.patch(path, json={"description": "rotated monthly"}).json()
    assert (described["version"], described["description"], described["name"]) == (1, "rotated monthly", secret["name"])
    assert client.patch(path, json={"value": "two"}).json()["version"] == 2
    assert client.patch(path, json={"value": "two"}).json()["version"] == 3
    renamed = client.patch(path, json={"name": "RENAMED", "description": None}).json()
    assert (renamed["version"], renamed["name"], renamed["description"]) == (3, "RENAMED", None)
    assert client.get(path).json() == renamed


def test_names_must_match_their_pattern(client: TestClient[Any]) -> None:
    for name in ("1ABC", "with-dash", "has space", "", "é", "A" * 129):
        assert_validation(client.post("/api/v1/secrets", json={"name": name, "value": "v"}), ["body", "name"])
    assert create_secret(client, "_" + "a" * 127)["name"] == "_" + "a" * 127
    secret = create_secret(client, "lower_case_1")
    assert_validation(client.patch(f"/api/v1/secrets/{secret['id']}", json={"name": "9"}), ["body", "name"])


def test_values_are_at_most_64_kib_of_utf8_and_not_empty(client: TestClient[Any]) -> None:
    assert create_secret(client, "BIG", "x" * 65536)["version"] == 1
    assert create_secret(client, "WIDE", "é" * 32768)["version"] == 1  # 65536 bytes
    for value in ("x" * 65537, "é" * 32769, ""):
        assert_validation(client.post("/api/v1/secrets", json={"name": "N", "value": value}), ["body", "value"])
    secret = create_secret(client, "SMALL")
    too_big = client.patch(f"/api/v1/secrets/{secret['id']}", json={"value": "€" * 30000})  # 90000 bytes
    assert_validation(too_big, ["body", "value"])
    assert client.get(f"/api/v1/secrets/{secret['id']}").json()["version"] == 1


def test_missing_and_unknown_fields_are_422(client: TestClient[Any]) -> None:
    assert_validation(client.post("/api/v1/secrets", json={"name": "N"}), ["body", "value"])
    assert_validation(client.post("/api/v1/secrets", json={"value": "v"}), ["body", "name"])
    assert client.post("/api/v1/secrets", json={"name": "N", "value": "v", "version": 7}).status_code == 422
    secret = create_secret(client)
    assert client.patch(f"/api/v1/secrets/{secret['id']}", json={"version": 9}).status_code == 422


def test_no_error_quotes_the_value(client: TestClient[Any]) -> None:
    wrong = [
        {"name": "bad name", "value": VALUE},
        {"name": "N", "value": VALUE, "extra": 1},
        {"name": "N", "value": VALUE * 3000},
        {"name": 5, "value": VALUE},
        {"name": "N", "value": [VALUE]},
        {"name": "N", "value": {"nested": VALUE}},
    ]
    for body in wrong:
        response = client.post("/api/v1/secrets", json=body)
        assert response.status_code == 422, response.text
        assert VALUE not in response.text
    text = f'{{"name": "N", "value": "{VALUE}" ,,}}'
    malformed = client.post("/api/v1/secrets", content=text, headers={"Content-Type": "application/json"})
    assert malformed.status_code == 400
    assert VALUE not in malformed.text
    secret = create_secret(client)
    clash = client.post("/api/v1/secrets", json={"name": secret["name"], "value": VALUE})
    assert clash.status_code == 409
    assert VALUE not in clash.text


def test_duplicate_names_are_409_and_other_organizations_are_apart(client: TestClient[Any]) -> None:
    first = create_secret(client, "TOKEN")
    clash = client.post("/api/v1/secrets", json={"name": "TOKEN", "value": "other"})
    assert clash.status_code == 409
    assert clash.json()["error"]["code"] == "CONFLICT"
    assert clash.json()["error"]["details"]["field"] == "name"
    second = create_secret(client, "OTHER")
    assert client.patch(f"/api/v1/secrets/{second['id']}", json={"name": "TOKEN"}).status_code == 409
    other_org = bearer(make_jwt("org-other"))
    assert client.post("/api/v1/secrets", json={"name": "TOKEN", "value": "x"}, headers=other_org).status_code == 201
    assert client.get(f"/api/v1/secrets/{first['id']}", headers=other_org).status_code == 404
    assert client.get("/api/v1/secrets", headers=other_org).json()["total"] == 1


def test_delete_and_unknown_ids_are_404(client: TestClient[Any]) -> None:
    secret = create_secret(client)
    path = f"/api/v1/secrets/{secret['id']}"
    assert client.delete(path).status_code == 204
    for response in (client.get(path), client.patch(path, json={"value": "v"}), client.delete(path),
                     client.get(path + "/accesses")):  # fmt: skip
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"
    assert client.get("/api/v1/secrets").json()["total"] == 0


def test_viewers_read_metadata_and_members_write(client: TestClient[Any]) -> None:
    secret = create_secret(client)
    path = f"/api/v1/secrets/{secret['id']}"
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.get(path, headers=viewer).status_code == 200
    assert client.get(path + "/accesses", headers=viewer).status_code == 200
    assert client.get("/api/v1/secrets", headers=viewer).json()["total"] == 1
    denied = [
        client.post("/api/v1/secrets", json={"name": "V", "value": "v"}, headers=viewer),
        client.patch(path, json={"value": "v"}, headers=viewer),
        client.delete(path, headers=viewer),
    ]
    assert [response.status_code for response in denied] == [403, 403, 403]
    member = bearer(make_jwt("default", roles=["member"]))
    made = client.post("/api/v1/secrets", json={"name": "M", "value": "v"}, headers=member)
    assert made.status_code == 201
    assert client.patch(path, json={"value": "w"}, headers=member).json()["version"] == 2
    assert client.delete(f"/api/v1/secrets/{made.json()['id']}", headers=member).status_code == 204


def test_the_idempotency_key_replays_a_create(client: TestClient[Any]) -> None:
    headers = {"Idempotency-Key": "create-token-once"}
    first = client.post("/api/v1/secrets", json={"name": "TOKEN", "value": VALUE}, headers=headers)
    again = client.post("/api/v1/secrets", json={"name": "TOKEN", "value": VALUE}, headers=headers)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again.headers.get("idempotent-replayed") == "true"
    changed = client.post("/api/v1/secrets", json={"name": "TOKEN", "value": VALUE + "x"}, headers=headers)
    assert changed.status_code == 422
    assert client.get("/api/v1/secrets").json()["total"] == 1


ENVIRONMENT = {
    "env_vars": {"PLAIN": "no reference", "TOKEN": "Bearer {{secret:API_TOKEN}}"},
    "secrets": ["DB_PASSWORD"],
    "mcp_servers": {
        "search": {
            "url": "https://mcp.example/sse",
            "transport_type": "sse",
            "headers": {"X-Key": "{{ secret:API_TOKEN }}"},
        },
        "local": {"command": "tool", "env": {"PASS": "{{secret:DB_PASSWORD}}"}},
    },
}


def test_agents_and_teams_may_name_only_existing_secrets(client: TestClient[Any]) -> None:
    create_secret(client, "API_TOKEN")
    create_secret(client, "DB_PASSWORD")
    agent = create_agent(client, execution_environment=ENVIRONMENT)
    assert agent["execution_environment"]["env_vars"]["TOKEN"] == "Bearer {{secret:API_TOKEN}}"
    team = client.post("/api/v1/teams", json={"name": "crew", "execution_environment": ENVIRONMENT})
    assert team.status_code == 201, team.text
    unknown = [
        ({"env_vars": {"TOKEN": "{{secret:MISSING}}"}}, ["env_vars", "TOKEN"]),
        ({"secrets": ["DB_PASSWORD", "MISSING"]}, ["secrets", 1]),
        ({"mcp_servers": {"s": {"command": "c", "env": {"K": "x{{secret:MISSING}}"}}}},
         ["mcp_servers", "s", "env", "K"]),
        ({"mcp_servers": {"s": {"url": "http://m", "headers": {"H": "{{secret:MISSING}}"}}}},
         ["mcp_servers", "s", "headers", "H"]),
        ({"env_vars": {"BAD": "{{secret:not-a-name}}"}}, ["env_vars", "BAD"]),
    ]  # fmt: skip
    for environment, field in unknown:
        loc = ["body", "execution_environment", *field]
        assert_validation(client.post("/api/v1/agents", json={"name": "a2", "execution_environment": environment}), loc)
        assert_validation(client.post("/api/v1/teams", json={"name": "t2", "execution_environment": environment}), loc)
        agent_patch = client.patch(f"/api/v1/agents/{agent['id']}", json={"execution_environment": environment})
        assert_validation(agent_patch, loc)
        team_patch = client.patch(f"/api/v1/teams/{team.json()['id']}", json={"execution_environment": environment})
        assert_validation(team_patch, loc)
    assert client.get(f"/api/v1/agents/{agent['id']}").json()["execution_environment"] == agent["execution_environment"]
    assert client.get("/api/v1/agents").json()["total"] == 1
    other_org = bearer(make_jwt("org-other"))
    body = {"name": "a", "execution_environment": ENVIRONMENT}
    elsewhere = client.post("/api/v1/agents", json=body, headers=other_org)
    assert elsewhere.status_code == 422  # another organization's secrets are not this one's


def test_a_rename_of_an_agent_does_not_trip_on_a_secret_deleted_since(client: TestClient[Any]) -> None:
    secret = create_secret(client, "API_TOKEN")
    agent = create_agent(client, execution_environment={"env_vars": {"T": "{{secret:API_TOKEN}}"}})
    forced = client.delete(f"/api/v1/secrets/{secret['id']}", params={"force": "true"})
    assert (forced.status_code, forced.headers["x-dangling-references"]) == (204, f"agent/{agent['id']}")
    assert client.patch(f"/api/v1/agents/{agent['id']}", json={"name": "renamed"}).status_code == 200
    environment = {"execution_environment": agent["execution_environment"]}
    again = client.patch(f"/api/v1/agents/{agent['id']}", json=environment)
    assert_validation(again, ["body", "execution_environment", "env_vars", "T"])


async def _reveal(client: TestClient[Any], names: list[str], execution_id: str, worker_id: str) -> dict[str, str]:
    ports = client.app.state["ports"]
    async with ports.uow() as uow:
        values = await reveal_for_lease(
            uow, ports.secrets_cipher, ports.ids, "default", names,
            execution_id=execution_id, worker_id=worker_id, now=ports.clock.now(),
        )  # fmt: skip
        await uow.commit()
    return values


def test_reads_for_leases_are_listed_as_accesses(client: TestClient[Any]) -> None:
    secret = create_secret(client, "API_TOKEN")
    create_secret(client, "OTHER")
    call = client.blocking_portal.call  # what the lease will do, in the app's loop
    assert call(_reveal, client, ["API_TOKEN"], "execution-1", "worker-a") == {"API_TOKEN": VALUE}
    both = call(_reveal, client, ["API_TOKEN", "OTHER"], "execution-2", "worker-b")
    assert both == {"API_TOKEN": VALUE, "OTHER": VALUE}
    accesses = client.get(f"/api/v1/secrets/{secret['id']}/accesses", params={"limit": 1})
    assert accesses.status_code == 200
    body = accesses.json()
    assert (body["total"], body["limit"], body["offset"]) == (2, 1, 0)
    assert set(body["items"][0]) == {"id", "secret_id", "execution_id", "worker_id", "accessed_at"}
    everything = client.get(f"/api/v1/secrets/{secret['id']}/accesses").json()["items"]
    assert {(a["execution_id"], a["worker_id"]) for a in everything} == {("execution-1", "worker-a"),
                                                                        ("execution-2", "worker-b")}  # fmt: skip
    assert client.get(f"/api/v1/secrets/{secret['id']}").json()["last_accessed_at"] == everything[-1]["accessed_at"]
    assert_validation(client.get(f"/api/v1/secrets/{secret['id']}/accesses", params={"limit": 0}), ["query", "limit"])
