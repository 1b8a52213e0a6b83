"""Errors that teach: a value outside a closed set names the set, an unknown query parameter the known ones."""

from __future__ import annotations

import uuid
from typing import Any

from litestar.testing import TestClient

from controlplane_domain.agents.entity import AgentStatus
from controlplane_domain.executions.entity import ExecutionStatus
from controlplane_domain.jobs.entity import TriggerType
from tests.support import BEFORE_THE_STORE

pytestmark = BEFORE_THE_STORE  # (refused before any store is asked: the same on every store)


def refusal(response: Any, loc: list[Any]) -> tuple[str, dict[str, Any]]:
    """The 422's first item's message, checked to be the envelope's issue too, and the envelope's details."""
    assert response.status_code == 422, response.text
    body = response.json()
    first = body["detail"][0]
    assert first["loc"] == loc, body
    assert body["error"]["details"]["issue"] == first["msg"]
    assert body["error"]["message"] == f"{'.'.join(map(str, loc[1:]))}: {first['msg']}"
    return first["msg"], body["error"]["details"]


def one_of(values: list[str]) -> str:
    return "expected one of " + ", ".join(f"'{value}'" for value in values)


def test_a_body_enum_names_its_values(client: TestClient[Any]) -> None:
    sent = client.post("/api/v1/agents", json={"name": "writer", "status": "asleep"})
    message, details = refusal(sent, ["body", "status"])
    statuses = [status.value for status in AgentStatus]
    assert message == f"Invalid enum value 'asleep': {one_of(statuses)}"
    assert details["allowed"] == statuses


def test_a_tagged_unions_tag_names_the_tags(client: TestClient[Any]) -> None:
    job = {"name": "nightly", "trigger": {"type": "job_firing"}, "target": {"agent_id": str(uuid.uuid4())},
           "prompt": "report"}  # fmt: skip
    message, details = refusal(client.post("/api/v1/jobs", json=job), ["body", "trigger", "type"])
    triggers = [trigger.value for trigger in TriggerType]
    assert message == f"Invalid value 'job_firing': {one_of(triggers)}"
    assert details["allowed"] == triggers


def test_a_query_enum_names_its_values(client: TestClient[Any]) -> None:
    message, details = refusal(client.get("/api/v1/executions", params={"status": "sleeping"}), ["query", "status"])
    statuses = [status.value for status in ExecutionStatus]
    assert message == f"Invalid enum value 'sleeping': {one_of(statuses)}"
    assert details["allowed"] == statuses


def test_other_refusals_say_what_they_said(client: TestClient[Any]) -> None:
    message, details = refusal(client.post("/api/v1/agents", json={"name": "writer", "status": 3}), ["body", "status"])
    assert message == "Expected `str`, got `int`"
    assert "allowed" not in details


def test_an_unknown_query_parameter_names_those_the_document_declares(client: TestClient[Any]) -> None:
    document = client.get("/api/openapi.json").json()
    declared = sorted(
        parameter["name"]
        for parameter in document["paths"]["/api/v1/agents"]["get"]["parameters"]
        if parameter["in"] == "query"
    )
    assert declared, "the list takes parameters"
    message, details = refusal(client.get("/api/v1/agents", params={"colour": "red"}), ["query", "colour"])
    assert message == f"unknown query parameter (known: {', '.join(declared)})"
    assert details["known"] == declared


def test_a_route_without_query_parameters_says_so(client: TestClient[Any]) -> None:
    agent = f"/api/v1/agents/{uuid.uuid4()}"  # (refused before it is looked up)
    message, details = refusal(client.get(agent, params={"page": "2"}), ["query", "page"])
    assert message == "unknown query parameter (this route takes none)"
    assert details["known"] == []


def test_a_header_is_not_a_query_parameter(client: TestClient[Any]) -> None:
    """The stream reads `Last-Event-ID` (a header) and `last_event_id` (its query twin): the handler's name for
    the header is neither known nor accepted in the query."""
    stream = f"/api/v1/executions/{uuid.uuid4()}/stream"
    message, details = refusal(
        client.get(stream, params={"last_event_id_header": "3"}), ["query", "last_event_id_header"]
    )
    assert "last_event_id" in details["known"]
    assert "last_event_id_header" not in details["known"]
    assert message.startswith("unknown query parameter (known: ")


def test_a_context_graph_query_prefix_is_named(client: TestClient[Any]) -> None:
    message, details = refusal(client.get("/api/v1/context-graph/nodes", params={"colour": "red"}), ["query", "colour"])
    assert "property.<key>" in details["known"]
    assert message.endswith(", property.<key>)")
