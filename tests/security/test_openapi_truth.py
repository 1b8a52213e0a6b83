"""The OpenAPI document declares what the server enforces: request bodies are closed (unknown fields are 422),
and the constraints of nested values (items, dict values and keys, union branches) are stated where they apply."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.support import BEFORE_THE_STORE

pytestmark = BEFORE_THE_STORE  # (the document is the app's: the same on every store)


@pytest.fixture
def document(client: TestClient[Any]) -> dict[str, Any]:
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    reference = schema.get("$ref")
    if reference is None:
        return None, schema
    name = str(reference).removeprefix("#/components/schemas/")
    return name, document["components"]["schemas"][name]


def objects_in(document: dict[str, Any], schema: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object schema with declared properties reachable from `schema` (through references, properties,
    items, dict values and union branches), each once, with where it was reached."""
    seen: set[str] = set()
    pending = [(where, schema)]
    while pending:
        place, current = pending.pop()
        name, current = _resolve(document, current)
        if name is not None:
            if name in seen:
                continue
            seen.add(name)
            place = f"{place} ({name})"
        if "properties" in current:
            yield place, current
        for key, value in (current.get("properties") or {}).items():
            pending.append((f"{place}.{key}", value))
        for keyword in ("items", "additionalProperties"):
            if isinstance(current.get(keyword), dict):
                pending.append((f"{place}[]", current[keyword]))
        for keyword in ("oneOf", "anyOf", "allOf"):
            pending.extend((f"{place}|", branch) for branch in current.get(keyword) or ())


def request_bodies(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for media_type, content in (operation.get("requestBody") or {}).get("content", {}).items():
                if "json" in media_type:
                    yield f"{method.upper()} {path}", content["schema"]


def test_every_request_body_object_is_closed(document: dict[str, Any]) -> None:
    """The server answers an unknown field with 422, so every object a request body holds says
    `additionalProperties: false` (free-form maps, like `metadata`, declare no properties and stay open)."""
    bodies = list(request_bodies(document))
    assert len(bodies) > 50, bodies
    open_objects = [
        place
        for operation, body in bodies
        for place, schema in objects_in(document, body, operation)
        if schema.get("additionalProperties") is not False
    ]
    assert open_objects == []


def test_every_json_request_body_is_an_object_or_a_declared_shape(document: dict[str, Any]) -> None:
    """No request body is an untyped blob: each names its schema (a component or an inline type)."""
    for operation, body in request_bodies(document):
        _, schema = _resolve(document, body)
        assert schema.get("type") or schema.get("oneOf") or schema.get("anyOf"), operation


def test_nested_values_carry_their_constraints(document: dict[str, Any]) -> None:
    """Constraints on the items of a list, the values and keys of a map and a union's branch are in the document
    (Litestar states only a field's outermost ones; tests the plugin that adds msgspec's)."""
    schemas = document["components"]["schemas"]
    events = schemas["WebhookCreate"]["properties"]["events"]["items"]
    assert (events.get("minLength"), events.get("maxLength")) == (1, 64)
    variables = schemas["ContextPut"]["properties"]["variables"]
    assert variables["propertyNames"]["pattern"] == "^[A-Za-z_][A-Za-z0-9_]*$"
    assert variables["additionalProperties"]["maxLength"] == 8192


def test_integer_bounds_are_exact(document: dict[str, Any]) -> None:
    """A bound of 2**63 - 1 is that integer, not the float 2**63 (a value the decoder refuses)."""
    tasks = document["components"]["schemas"]["WorkerHeartbeat"]["properties"]["tasks_processed"]
    assert tasks["maximum"] == 2**63 - 1
    assert isinstance(tasks["maximum"], int)


def test_update_fields_carry_the_constraints_of_their_value(document: dict[str, Any]) -> None:
    """`X | UNSET` (a PATCH field) documents X's constraints, as the create's field does."""
    schemas = document["components"]["schemas"]
    (labels,) = schemas["NodeUpdate"]["properties"]["labels"]["oneOf"]
    assert labels["items"]["pattern"] == schemas["NodeCreate"]["properties"]["labels"]["items"]["pattern"]
    (runtimes,) = schemas["ModelUpdate"]["properties"]["compatible_runtimes"]["oneOf"]
    assert runtimes["items"]["enum"] == ["default", "sdk_code"]
