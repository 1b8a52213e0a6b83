"""Keys made of digits other than ASCII ones ("²", Arabic-Indic or Bengali digits), or holding a dot, are keys: a
request that names one where a rule fails is a 422 whose `loc` names the key as it was sent, never a 500
(`str.isdigit` holds for "²", and `int("²")` raises). ASCII digits in a key are a key too ("0" is not index 0)."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from controlplane_http.executions.streaming import parse_last_event_id
from tests.http.test_agents import assert_validation, create_agent
from tests.http.test_integrations import TOKEN

KEYS = ["²", "\u0661", "\u09e7", "0", "12", "a.b", "x.0"]


def test_a_skills_configuration_key_is_named_as_sent(client: TestClient[Any]) -> None:
    for key in KEYS:
        response = client.post("/api/v1/skills", json={"name": "s", "type": "shell", "configuration": {key: 1}})
        assert_validation(response, ["body", "configuration", key])
        assert response.json()["error"]["details"]["field"] == f"configuration.{key}"


def test_an_integrations_configuration_key_is_named_as_sent(client: TestClient[Any]) -> None:
    for key in KEYS:
        body = {"name": "gh", "kind": "github", "configuration": {"token": TOKEN, key: 1}}
        assert_validation(client.post("/api/v1/integrations", json=body), ["body", "configuration", key])


def test_a_custom_integrations_env_var_name_is_named_as_sent(client: TestClient[Any]) -> None:
    for key in KEYS:
        response = client.post("/api/v1/custom-integrations", json={"name": "tools", "env_vars": {key: "v"}})
        assert_validation(response, ["body", "env_vars", key])


def test_an_execution_environments_env_var_is_named_as_sent(client: TestClient[Any]) -> None:
    """A plain value under such a name is accepted as it is; a reference to no secret is a 422 naming it."""
    for number, key in enumerate(KEYS):
        agent = create_agent(client, f"a{number}", execution_environment={"env_vars": {key: "plain"}})
        assert agent["execution_environment"]["env_vars"] == {key: "plain"}
        unknown = {"name": "other", "execution_environment": {"env_vars": {key: "{{secret:NOPE}}"}}}
        where = ["body", "execution_environment", "env_vars", key]
        assert_validation(client.post("/api/v1/agents", json=unknown), where)
        server = {"command": "x", "env": {key: "{{secret:NOPE}}"}}
        mcp = {"name": "mcp", "execution_environment": {"mcp_servers": {"s": server}}}
        where = ["body", "execution_environment", "mcp_servers", "s", "env", key]
        assert_validation(client.post("/api/v1/agents", json=mcp), where)


def test_an_index_is_still_an_index(client: TestClient[Any]) -> None:
    body = {"name": "c", "setup_commands": ["ok", "  "]}
    assert_validation(client.post("/api/v1/custom-integrations", json=body), ["body", "setup_commands", 1])


def test_a_last_event_id_of_latin_1_digits_is_no_number() -> None:
    """`Last-Event-ID: ²` (the Latin-1 byte 0xB2, as a server decodes it) resumes from the start, as any header
    that is not a number does. (The in-process test client sends headers as UTF-8, so it cannot carry this one.)"""
    for header in ("²", "¹²", " ³ ", "\u0661"):
        assert parse_last_event_id(header, None) == 0
        assert parse_last_event_id(header, 4) == 4
    assert parse_last_event_id(" 12 ", None) == 12
