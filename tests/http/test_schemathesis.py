"""Schemathesis against the in-process app and its own OpenAPI document: no 5xx, responses as documented."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, settings
from litestar import Litestar
from schemathesis import checks
from schemathesis.config import SchemathesisConfig

from controlplane_adapters.clock import SystemClock
from controlplane_adapters.settings.model import AuthSettings, Settings
from controlplane_http.bootstrap import build_app
from tests.support import JWT_SECRET, SERVICE_KEY, bearer


def conformance_app() -> Litestar:
    settings = Settings(
        database_url="memory://",
        service_api_key=SERVICE_KEY,
        rate_limit_per_minute=1_000_000,
        worker_rate_limit_per_minute=1_000_000,
        service_rate_limit_per_minute=1_000_000,
        auth=AuthSettings(jwt_secret=JWT_SECRET),
    )
    return build_app(settings, clock=SystemClock())


app = conformance_app()
# A body over the limit is refused with 413 (documented on every route with a body): a rejection like the defaults'.
REJECTIONS = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]
CONFIG = SchemathesisConfig.from_dict({"checks": {"negative_data_rejection": {"expected-statuses": REJECTIONS}}})
schema = schemathesis.openapi.from_asgi("/api/openapi.json", app, config=CONFIG)


@schema.auth()
class ServiceKey:
    """Credentials through Schemathesis' own auth hook, so its negative cases may still drop them."""

    def get(self, case: schemathesis.Case, context: schemathesis.AuthContext) -> str:
        return SERVICE_KEY

    def set(self, case: schemathesis.Case, data: str, context: schemathesis.AuthContext) -> None:
        case.headers = {**(case.headers or {}), **bearer(data)}


# Business rules that JSON Schema cannot express (a runtime from the registry, exactly one MCP transport, a
# referenced team that exists, unique names) rightly reject some schema-valid bodies with a documented 4xx,
# so "schema-valid request accepted" is the one check left out; every other built-in check runs.
EXCLUDED = [checks.positive_data_acceptance]


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_document(case: schemathesis.Case) -> None:
    response = case.call_and_validate(excluded_checks=EXCLUDED)
    # Guards the test against passing on 401s alone: a case that carries the service key is authenticated (the
    # negative cases that drop or mangle the credentials may be refused). Checked case by case, so it holds
    # however the cases are shared out between the test processes.
    if (case.headers or {}).get("Authorization") == bearer(SERVICE_KEY)["Authorization"]:
        assert response.status_code != 401, response.text


# Schema-valid requests (the positive phase only) must be accepted: 2xx, or a rejection every API may give a valid
# request (Schemathesis' defaults for `positive_data_acceptance`: 401, 403, 404 for an id that names nothing, 409,
# 429), or one of the rules below, which JSON Schema cannot state (docs/api-decisions.md, "What the document
# cannot say"). A 422 that no rule names is a constraint the document fails to declare: the test fails.
# No NUL in the generated text: the server refuses U+0000 in any text (no database stores it), which the document
# states once, in its description, rather than as a pattern on every string.
POSITIVE_CONFIG = SchemathesisConfig.from_dict({"generation": {"mode": "positive", "allow-x00": False}})
positive = schemathesis.openapi.from_asgi("/api/openapi.json", app, config=POSITIVE_CONFIG)
positive.auth()(ServiceKey)


@dataclass(frozen=True)
class Accepted:
    """A 422 a schema-valid request may get: on these operations (`METHOD /path` templates, regular expressions),
    for a field and an issue that match (the error envelope's `details`)."""

    operations: str
    field: str
    issue: str
    why: str

    def covers(self, operation: str, field: str, issue: str) -> bool:
        return bool(
            re.fullmatch(self.operations, operation)
            and re.fullmatch(self.field, field, re.DOTALL)  # (a key the request chose may hold a newline)
            and re.search(self.issue, issue, re.DOTALL)
        )


ACCEPTED = (
    Accepted(
        r"GET /api/v1/.*",
        "from|to",
        "span at most|be before|be after",
        "a relation between two parameters",
    ),
    Accepted(r"GET /api/v1/.*", "from|to", "must be from 1971 to 9998", "a year `format: date-time` cannot bound"),
    Accepted(r"\w+ /api/v1/storage/files/\{path\}", "path", r"bytes \(UTF-8\)", "bytes, not characters"),
    Accepted(
        ".*",
        ".*",
        "exactly one|specify exactly one transport|is required for the http and sse|needs its own figure"
        "|must not exceed",
        "a rule between fields",
    ),
    Accepted(
        r"\w+ /api/v1/(skills|integrations|(environments|agents|teams)/[^/]+/skills/[^/]+)(/[^/]+)?",
        r"(configuration|configuration_override)(\..*)?",
        ".",
        "a schema chosen by another field",
    ),
    Accepted(r"\w+ /api/v1/templates.*", ".*", ".", "a template's body is a creation payload"),
    Accepted(
        ".*",
        ".*",
        r"no [\w ]+ of this organization|no node .* in the organization|unknown (\w+ )?id|unknown secret"
        r"|does not exist|no step has the id",
        "a reference to nothing",
    ),
    Accepted("POST /api/v1/api-keys", "expires_at", "in the future", "the clock"),
    Accepted(
        "POST /api/v1/api-keys", "environment_ids|queue_ids", "only a worker key is bound", "a rule between fields"
    ),
    Accepted(".*", "body", "must not contain NUL", "stated once, in info.description (the coverage phase sends it)"),
    Accepted(
        r"\w+ /api/v1/custom-integrations.*",
        r"env_vars\..*",
        ".",
        "custom integration variables: a name's rule is stated in the description only",
    ),
    Accepted(r"\w+ /api/v1/policies.*", "rego", ".", "a Rego module's grammar"),
    Accepted(r"\w+ /api/v1/jobs.*", r"trigger\.cron", ".", "a cron expression's grammar"),
    Accepted(
        r"\w+ /api/v1/(webhooks|jobs).*",
        "url|webhook_url",
        "URL|spaces or control",
        "where deliveries may go (configuration)",
    ),
    Accepted(
        ".*",
        ".*",
        r"Expected `int( \| (null|str))?`, got `float`",
        "1.0: an integer to JSON Schema, a float to the decoder",
    ),
)
POSITIVE: Counter[int] = Counter()


@positive.parametrize()
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
def test_schema_valid_requests_are_accepted(case: schemathesis.Case) -> None:
    """No server error and no undeclared rejection of a request the document says is valid, on every operation."""
    response = case.call()
    POSITIVE[response.status_code // 100] += 1
    try:
        case.validate_response(response, checks=[checks.not_a_server_error, checks.positive_data_acceptance])
    except (AssertionError, BaseExceptionGroup):  # (Schemathesis raises a group of failures)
        if response.status_code != 422:
            raise
        details = response.json()["error"]["details"]
        operation = f"{case.method.upper()} {case.path}"
        if not any(rule.covers(operation, details.get("field", ""), details.get("issue", "")) for rule in ACCEPTED):
            raise


async def test_event_streams_conform_to_their_document() -> None:
    """The streams of executions, as an execute with `stream: true` answers them and as `.../stream` replays them
    whole or resumed, are what the document says each event is (ids, types, and `data` as JSON of its shape).

    The random cases above name no execution that exists, so they never see an event: these streams are real.
    (One event loop runs the app, a worker and the streaming client: an execute's stream ends once the worker,
    woken by its long poll, completes the execution.)"""
    streams = conformance_app()
    document = schemathesis.openapi.from_asgi("/api/openapi.json", streams)
    headers = bearer(SERVICE_KEY)
    transport = httpx.ASGITransport(app=streams)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver", headers=headers) as client:

        async def created(path: str, body: dict[str, Any]) -> str:
            response = await client.post(path, json=body)
            assert response.status_code == 201, response.text
            return str(response.json()["id"])

        async def work(queue_id: str) -> str:
            lease = await client.post(
                f"/api/v1/worker-queues/{queue_id}/lease", json={"worker_id": "w", "wait_seconds": 30}
            )
            assert lease.status_code == 200, lease.text
            execution_id = str(lease.json()["execution"]["id"])
            report = {"worker_id": "w", "attempt": 1}
            events = [{"type": "message_chunk", "data": {"text": "hel"}}, {"type": "tool_started", "data": {}}]
            appended = await client.post(f"/api/v1/executions/{execution_id}/events", json={**report, "events": events})
            assert appended.status_code == 200, appended.text
            done = await client.post(
                f"/api/v1/executions/{execution_id}/complete",
                json={**report, "status": "completed", "response": "hello"},
            )
            assert done.status_code == 200, done.text
            return execution_id

        environment_id = await created("/api/v1/environments", {"name": "streams"})
        queue_id = await created(f"/api/v1/environments/{environment_id}/worker-queues", {"name": "streams"})
        targets = {
            "/api/v1/agents/{agent_id}/execute": ("agent_id", await created("/api/v1/agents", {"name": "streamer"})),
            "/api/v1/teams/{team_id}/execute": ("team_id", await created("/api/v1/teams", {"name": "streamers"})),
        }
        for path, (parameter, target_id) in targets.items():
            body = {"prompt": "hello", "worker_queue_id": queue_id, "stream": True}
            streamed, execution_id = await asyncio.gather(
                client.post(path.replace("{" + parameter + "}", target_id), json=body), work(queue_id)
            )
            assert streamed.headers["content-type"].startswith("text/event-stream"), streamed.text
            case = document[path]["POST"].Case(
                path_parameters={parameter: target_id}, body=body, media_type="application/json", headers=headers
            )
            case.validate_response(streamed, excluded_checks=EXCLUDED)
            for resume, first in (({}, "1"), ({"Last-Event-ID": "2"}, "3")):
                replayed = await client.get(f"/api/v1/executions/{execution_id}/stream", headers=resume)
                assert replayed.status_code == 200, replayed.text
                ids = re.findall(r"^id: (.*)$", replayed.text, re.MULTILINE)
                assert ids[0] == first, replayed.text
                assert re.findall(r"^event: (.*)$", replayed.text, re.MULTILINE)[-1] == "done", replayed.text
                case = document["/api/v1/executions/{execution_id}/stream"]["GET"].Case(
                    path_parameters={"execution_id": execution_id}, headers={**headers, **resume}
                )
                case.validate_response(replayed, excluded_checks=EXCLUDED)
