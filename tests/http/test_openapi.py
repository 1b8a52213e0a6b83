"""The OpenAPI document describes every route, body and error."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_http.api_docs.controller import SWAGGER_UI_VERSION
from tests.support import BEFORE_THE_STORE

pytestmark = BEFORE_THE_STORE  # (the document is the app's: the same on every store)

EXPECTED_OPERATIONS = {
    ("get", "/api/health"),
    ("post", "/api/v1/agents"),
    ("get", "/api/v1/agents"),
    ("get", "/api/v1/agents/{agent_id}"),
    ("patch", "/api/v1/agents/{agent_id}"),
    ("delete", "/api/v1/agents/{agent_id}"),
    ("post", "/api/v1/teams"),
    ("get", "/api/v1/teams"),
    ("get", "/api/v1/teams/{team_id}"),
    ("patch", "/api/v1/teams/{team_id}"),
    ("delete", "/api/v1/teams/{team_id}"),
    ("post", "/api/v1/teams/{team_id}/agents/{agent_id}"),
    ("delete", "/api/v1/teams/{team_id}/agents/{agent_id}"),
    ("post", "/api/v1/workers/heartbeat"),
    ("get", "/api/v1/workers"),
    ("get", "/api/v1/workers/{worker_id}"),
    ("post", "/api/v1/models"),
    ("get", "/api/v1/models"),
    ("get", "/api/v1/models/{model_id}"),
    ("patch", "/api/v1/models/{model_id}"),
    ("delete", "/api/v1/models/{model_id}"),
    ("get", "/api/v1/runtimes"),
}


def test_document_header(client: TestClient[Any]) -> None:
    document = client.get("/api/openapi.json").json()
    assert document["openapi"] == "3.1.0"
    assert document["info"]["title"] == "Agent Control Plane API"
    assert document["info"]["version"] == "1.0.0"
    assert document["components"]["securitySchemes"]["BearerAuth"]["scheme"] == "bearer"


def test_every_operation_is_described_with_its_errors(client: TestClient[Any]) -> None:
    document = client.get("/api/openapi.json").json()
    operations = {(method, path) for path, item in document["paths"].items() for method in item}
    assert operations >= EXPECTED_OPERATIONS
    for method, path in EXPECTED_OPERATIONS:
        operation = document["paths"][path][method]
        responses = operation["responses"]
        assert {"400", "401", "422", "500"} <= set(responses), (method, path)
        for code, response in responses.items():
            if not code.startswith("2"):
                schema = response["content"]["application/json"]["schema"]["$ref"]
                assert schema.endswith(("ErrorResponse", "HTTPValidationError")), (method, path, code)
        assert responses["422"]["content"]["application/json"]["schema"]["$ref"].endswith("HTTPValidationError")
        assert responses["401"]["content"]["application/json"]["schema"]["$ref"].endswith("ErrorResponse")
        assert any(code.startswith("2") for code in responses)
        if method in ("post", "patch") and "{agent_id}" not in path.split("/teams/")[-1]:
            assert "requestBody" in operation, (method, path)
        assert operation.get("operationId"), (method, path)


def test_team_schema_carries_the_spec_bounds(client: TestClient[Any]) -> None:
    schemas = client.get("/api/openapi.json").json()["components"]["schemas"]
    llm = schemas["LLMConfig"]["properties"]
    bounds = {
        name: (llm[name].get("minimum"), llm[name].get("maximum"))
        for name in ("temperature", "max_tokens", "top_p", "top_k", "frequency_penalty", "presence_penalty")
    }
    assert bounds == {
        "temperature": (0, 2),
        "max_tokens": (1, None),
        "top_p": (0, 1),
        "top_k": (0, None),
        "frequency_penalty": (-2, 2),
        "presence_penalty": (-2, 2),
    }
    reasoning = schemas["ReasoningConfig"]["properties"]
    assert (reasoning["max_steps"]["minimum"], reasoning["max_steps"]["maximum"]) == (1, 100)
    assert reasoning["min_steps"]["minimum"] == 1
    assert "TeamWithAgentsResponse" in schemas


def test_docs_ui_is_served(client: TestClient[Any]) -> None:
    response = client.get("/api/docs")
    assert response.status_code == 200
    assert "swagger" in response.text.lower()
    assert "Agent Control Plane API" in response.text


def test_the_docs_page_loads_only_what_the_service_serves(client: TestClient[Any]) -> None:
    client.headers.pop("Authorization", None)
    page = client.get("/api/docs").text
    loaded = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page)
    assert len(loaded) == 4, loaded  # the bundle, the standalone preset, the stylesheet, the icon: all of ours
    for url in loaded:
        assert url.startswith(f"/api/docs/assets/swagger-ui-{SWAGGER_UI_VERSION}/"), url
        asset = client.get(url)
        assert asset.status_code == 200, url
        assert asset.headers["content-type"].split(";")[0] in {"text/javascript", "text/css", "image/png"}
        assert asset.headers["x-content-type-options"] == "nosniff"
        assert len(asset.content) > 500, url
    # what is served is the swagger-ui-dist release the URLs name, under its license
    shipped = resources.files("controlplane_http.api_docs") / "static" / "swagger-ui"
    package = json.loads((shipped / "package.json").read_text())
    assert (package["name"], package["version"]) == ("swagger-ui-dist", SWAGGER_UI_VERSION)
    assert (shipped / "LICENSE").read_text().startswith("\n                                 Apache License")


@pytest.mark.parametrize(
    "path",
    [
        f"/api/docs/assets/swagger-ui-{SWAGGER_UI_VERSION}/package.json",
        f"/api/docs/assets/swagger-ui-{SWAGGER_UI_VERSION}/..%2F..%2Fcontroller.py",
        "/api/docs/assets/swagger-ui-0.0.1/swagger-ui.css",
    ],
)
def test_nothing_else_is_served_as_a_docs_asset(client: TestClient[Any], path: str) -> None:
    client.headers.pop("Authorization", None)
    assert client.get(path).status_code == 404


@pytest.mark.parametrize("path", ["/api/openapi.json", "/api/docs"])
def test_the_document_and_its_page_need_no_credentials(client: TestClient[Any], path: str) -> None:
    client.headers.pop("Authorization", None)
    assert client.get(path).status_code == 200


@pytest.mark.parametrize(
    "path", ["/api/openapi", "/api/openapi.jsonx", "/api/openapi.yaml", "/api/docsx", "/api/docs/x"]
)
def test_paths_that_only_look_like_the_document_need_credentials(client: TestClient[Any], path: str) -> None:
    client.headers.pop("Authorization", None)
    response = client.get(path)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/v1/executions/{execution_id}/stream"),
        ("post", "/api/v1/agents/{agent_id}/execute"),
        ("post", "/api/v1/teams/{team_id}/execute"),
    ],
)
def test_event_streams_are_described_event_by_event(client: TestClient[Any], method: str, path: str) -> None:
    """OpenAPI 3.1: a `text/event-stream` response's schema is one event; its `data` is JSON of a named shape."""
    document = client.get("/api/openapi.json").json()
    stream = document["paths"][path][method]["responses"]["200"]["content"]["text/event-stream"]
    name = stream["schema"]["$ref"].removeprefix("#/components/schemas/")
    event = document["components"]["schemas"][name]
    assert set(event["required"]) == {"event", "id", "data"}
    data = event["properties"]["data"]
    assert (data["type"], data["contentMediaType"]) == ("string", "application/json")
    shape = data["contentSchema"]["$ref"].removeprefix("#/components/schemas/")
    assert set(document["components"]["schemas"][shape]["required"]) >= {"execution_id", "seq", "type", "data"}
