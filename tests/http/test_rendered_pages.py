"""A list page holds exactly what a get of each item answers, whoever rendered it (SQLite and Postgres render
agent pages themselves: controlplane_adapters/sql/rendered.py)."""

from __future__ import annotations

import sqlite3
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from controlplane_adapters.agents import sql as agents_sql
from controlplane_adapters.clock import ManualClock
from controlplane_adapters.sql import rendered
from controlplane_http.bootstrap import build_app
from controlplane_wire.agents import Agent
from tests.conftest import app_settings
from tests.support import SERVICE_KEY, bearer, make_jwt

text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=24)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
SECRET_NAMES = ["API_TOKEN", "db_password", "_X1"]
servers = st.fixed_dictionaries({"command": st.just("run")}, optional={"args": st.lists(text, max_size=2)})
environments = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "working_dir": st.none() | text,
        "env_vars": st.dictionaries(text, text, max_size=3),
        "secrets": st.lists(st.sampled_from(SECRET_NAMES), max_size=3),  # (each example's organization has them)
        "integration_ids": st.lists(st.integers(min_value=0, max_value=1), max_size=3),  # the example's two
        "custom_integration_ids": st.lists(st.just(0), max_size=2),  # the example's one
        "mcp_servers": st.dictionaries(text.map(lambda name: f"s{name}"), servers, max_size=2),
    },
)  # fmt: skip
agents = st.fixed_dictionaries(
    {"name": text},
    optional={
        "description": st.none() | text,
        "status": st.sampled_from(["active", "inactive", "archived", "idle"]),
        "runtime": st.sampled_from(["default", "sdk_code"]),
        "model_id": st.none() | text,
        "system_prompt": st.none() | text,
        "capabilities": st.lists(text, max_size=4),
        "skill_ids": st.lists(st.integers(min_value=0, max_value=1), max_size=4),  # of the example's two skills
        "execution_environment": environments,
        "configuration": st.dictionaries(text, json_values, max_size=4),
    },
)
steps = st.integers(min_value=0, max_value=2_000_000)  # microseconds between creates; 0 makes ties


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=st.lists(st.tuples(agents, steps), min_size=1, max_size=5), renamed=text)
def test_every_item_of_every_page_is_what_a_get_answers(
    client: TestClient[Any], clock: ManualClock, specs: list[tuple[dict[str, Any], int]], renamed: str
) -> None:
    headers = bearer(make_jwt(f"org-{uuid.uuid4().hex}"))  # an organization of this example's own
    clock.advance(1 - clock.now().microsecond / 1_000_000)  # a whole second: a first step of 0 has no fraction
    skills = [client.post("/api/v1/skills", json={"name": f"s{n}", "type": "web"}, headers=headers).json()["id"]
              for n in range(2)]  # fmt: skip
    for name in SECRET_NAMES:  # what an agent's execution environment may name
        made = client.post("/api/v1/secrets", json={"name": name, "value": "v"}, headers=headers)
        assert made.status_code == 201, made.text
    integrations = [client.post("/api/v1/integrations", json={"name": f"i{n}", "kind": "http", "configuration": {
        "base_url": "https://a.example"}}, headers=headers).json()["id"] for n in range(2)]  # fmt: skip
    custom = [client.post("/api/v1/custom-integrations", json={"name": "c"}, headers=headers).json()["id"]]
    created = []
    for spec, step in specs:
        clock.advance(step / 1_000_000)
        if "skill_ids" in spec:  # skill_ids name skills of the organization
            spec = {**spec, "skill_ids": [skills[index] for index in spec["skill_ids"]]}
        environment = spec.get("execution_environment") or {}
        if "integration_ids" in environment or "custom_integration_ids" in environment:  # of the organization too
            environment = {**environment, "integration_ids": [integrations[i] for i in environment.get(
                "integration_ids", [])], "custom_integration_ids": [custom[i] for i in environment.get(
                "custom_integration_ids", [])]}  # fmt: skip
            spec = {**spec, "execution_environment": environment}
        response = client.post(
            "/api/v1/agents", json={**spec, "name": f"{len(created)} {spec['name']}"}, headers=headers
        )
        assert response.status_code == 201, response.text
        created.append(response.json()["id"])
    clock.advance(0.000001)
    patched = client.patch(f"/api/v1/agents/{created[0]}", json={"description": renamed}, headers=headers)
    assert patched.status_code == 200, patched.text
    listed: list[dict[str, Any]] = []
    for offset in range(0, len(created) + 1, 2):
        page = client.get("/api/v1/agents", params={"limit": 2, "offset": offset}, headers=headers).json()
        assert (page["total"], page["limit"], page["offset"]) == (len(created), 2, offset)
        listed.extend(page["items"])
    assert sorted(item["id"] for item in listed) == sorted(created)
    for item in listed:  # a get is rendered by the database too, where pages are
        assert item == client.get(f"/api/v1/agents/{item['id']}", headers=headers).json()
    state = client.app.state
    rendering, state["rendered_pages"] = state["rendered_pages"], False  # the domain path, for the same rows
    try:
        for item in listed:
            assert item == client.get(f"/api/v1/agents/{item['id']}", headers=headers).json()
    finally:
        state["rendered_pages"] = rendering
    ordered = [(datetime.fromisoformat(item["created_at"]), item["id"]) for item in listed]
    assert ordered == sorted(ordered)


def test_a_rendered_get_answers_only_its_organizations_agent(client: TestClient[Any]) -> None:
    mine, theirs = bearer(make_jwt("org-rendered-a")), bearer(make_jwt("org-rendered-b"))
    created = client.post("/api/v1/agents", json={"name": "a", "configuration": {"k": [1, None]}}, headers=mine)
    agent = created.json()
    assert client.get(f"/api/v1/agents/{agent['id']}", headers=mine).json() == agent
    for path, headers in ((f"/api/v1/agents/{agent['id']}", theirs), (f"/api/v1/agents/{uuid.uuid4()}", mine),
                          ("/api/v1/agents/not-a-uuid", mine)):  # fmt: skip
        missing = client.get(path, headers=headers)
        assert missing.status_code == 404, missing.text
        assert missing.json()["error"]["code"] == "NOT_FOUND"


def test_an_empty_page_is_an_empty_list(client: TestClient[Any]) -> None:
    client.post("/api/v1/agents", json={"name": "only"})
    page = client.get("/api/v1/agents", params={"offset": 5})
    assert page.status_code == 200
    assert page.json() == {"items": [], "total": 1, "limit": 50, "offset": 5}


def test_the_agents_row_is_the_wire_agent() -> None:
    """SQLite renders agent pages only while the wire type is the row: a new field on one but not the other
    silently takes lists back to the slow path (and fails here)."""
    assert tuple(column.name for column in agents_sql.agents.columns) == Agent.__struct_fields__


def test_a_sqlite_without_json_functions_lists_through_the_domain_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class NoJson:
        Error = sqlite3.Error

        @staticmethod
        def connect(database: str) -> Any:
            raise sqlite3.OperationalError("no such function: json_object")

    monkeypatch.setattr(rendered, "sqlite3", NoJson)
    rendered.sqlite_can_render.cache_clear()
    try:
        app = build_app(app_settings(f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"))
    finally:
        rendered.sqlite_can_render.cache_clear()
    assert app.state["rendered_pages"] is False
    with TestClient(app) as client:
        client.headers.update(bearer(SERVICE_KEY))
        created = client.post("/api/v1/agents", json={"name": "a"}).json()
        page = client.get("/api/v1/agents").json()
    assert page["items"] == [created]
    assert page["total"] == 1
