"""The server's secrets stay out of reach (issue #31): a real `controlplane serve` on Postgres (a password in its
URL, or in PGPASSWORD) and S3 (moto's server, credentials given to the server), with every secret seeded to a
known value; a broad sweep of requests (every GET route of the OpenAPI document, error paths, /metrics, a policy
reading `opa.runtime().env`) then finds none of them in any answer (body or header), in any decision logged, nor
in the server's log. Two starts: `--workers 2` with the secrets in the environment, the secrets key given and
traces exported with a credential in OTEL_EXPORTER_OTLP_HEADERS (which the exporter still sends), and one process
with a YAML file's `${NAME}` references, PGPASSWORD, boto3's AWS_* variables and a secrets key file.
"""

from __future__ import annotations

import asyncio
import base64
import os
import secrets
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from controlplane_adapters.settings.environment import SECRET_VARIABLES
from tests.databases import truncate
from tests.e2e.conftest import Server, free_port, launch, stop_server
from tests.s3 import REGION, new_bucket
from tests.support import bearer, make_jwt, wait_until

ORG = "default"
EVIL_HOST = "evil.example"
# a policy an organization's admin may write: its deny messages are whatever the server's environment holds
LEAK_POLICY = """package leak
import rego.v1

deny contains value if {
    some value in opa.runtime().env
}

deny contains sprintf("%v", [opa.runtime()]) if true
"""
# what the sweep fills a route's path parameters with when the organization has no such thing (a 404 is an answer)
NAMED = {"organization_id": ORG, "kind": "github", "name": "claude-code", "path": "notes/readme.txt"}


def seeded(name: str) -> str:
    return f"seeded-{name}-{secrets.token_hex(12)}"


class Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that keeps each export's `Authorization` header (the exporter's credential)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.authorizations.append(self.headers.get("Authorization"))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def collector() -> Iterator[tuple[str, list[str | None]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    server.authorizations = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.authorizations  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        thread.join()


@dataclass
class Start:
    server: Server
    seeds: dict[str, str]  # what each seeded value is, by a name for the failure messages
    api_key: str
    jwt_secret: str
    metrics_token: str
    database_url: str
    workers: int
    exported: list[str | None] | None = None  # the OTLP exports' Authorization headers (a start that traces)


def _environment(extra: dict[str, str]) -> dict[str, str]:
    """The test run's environment without any of the server's own settings, plus `extra`."""
    own = ("SERVICE_", "CONTROLPLANE_", "AWS_", "PG")
    base = {name: value for name, value in os.environ.items() if not name.startswith(own)}
    return {**base, **extra}


def _launch(tmp_path: Path, env: dict[str, str], token: str, args: list[str]) -> Server:
    port = free_port()
    arguments = ["--host", "127.0.0.1", "--port", str(port), "--log-level", "debug", "--access-log", *args]
    return launch(tmp_path, env, token, arguments, port=port)


def start_in_environment(
    tmp_path: Path, postgres_url: str, s3_endpoint: str, collector: tuple[str, list[str | None]]
) -> Start:
    """`--workers 2`, every secret an environment variable, the database's password in its URL, traces exported
    with a credential in OTEL_EXPORTER_OTLP_HEADERS."""
    seeds = {name: seeded(name) for name in ("api-key", "jwt-secret", "metrics-token", "db-password")}
    seeds["otlp-token"] = seeded("otlp-token")
    seeds["s3-access-key-id"] = seeded("s3-key-id")
    seeds["s3-secret-access-key"] = seeded("s3-secret")
    seeds["secrets-key"] = base64.b64encode(secrets.token_bytes(32)).decode()
    url = sa.make_url(postgres_url).set(password=seeds["db-password"]).render_as_string(hide_password=False)
    env = _environment({
        "SERVICE_API_KEY": seeds["api-key"],
        "SERVICE_JWT_SECRET": seeds["jwt-secret"],
        "CONTROLPLANE_METRICS_TOKEN": seeds["metrics-token"],
        "CONTROLPLANE_SECRETS_KEY": seeds["secrets-key"],
        "CONTROLPLANE_DATABASE_URL": url,
        "CONTROLPLANE_STORAGE_BACKEND": "s3",
        "CONTROLPLANE_STORAGE_S3_BUCKET": new_bucket(s3_endpoint),
        "CONTROLPLANE_STORAGE_S3_ENDPOINT_URL": s3_endpoint,
        "CONTROLPLANE_STORAGE_S3_REGION": REGION,
        "CONTROLPLANE_STORAGE_S3_ACCESS_KEY_ID": seeds["s3-access-key-id"],
        "CONTROLPLANE_STORAGE_S3_SECRET_ACCESS_KEY": seeds["s3-secret-access-key"],
        "CONTROLPLANE_RATE_LIMIT_PER_MINUTE": "100000",
        "LEAK_TEST_COPY_OF_THE_KEY": seeds["api-key"],  # a copy under another name goes too
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector[0],
        "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{seeds['otlp-token']}",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    })  # fmt: skip
    server = _launch(tmp_path, env, seeds["api-key"], ["--workers", "2"])
    return Start(server, seeds, seeds["api-key"], seeds["jwt-secret"], seeds["metrics-token"], url, 2, collector[1])


def start_from_file(
    tmp_path: Path, postgres_url: str, s3_endpoint: str, collector: tuple[str, list[str | None]]
) -> Start:
    """One process: the API key and the JWT secret named by a YAML file's references, the database's password in
    PGPASSWORD, the S3 credentials in boto3's AWS_* variables, the secrets key in a file."""
    seeds = {name: seeded(name) for name in ("api-key", "jwt-secret", "metrics-token", "db-password")}
    seeds["aws-access-key-id"] = seeded("aws-key-id")
    seeds["aws-secret-access-key"] = seeded("aws-secret")
    seeds["aws-session-token"] = seeded("aws-token")
    seeds["secrets-key-file"] = base64.b64encode(secrets.token_bytes(32)).decode()
    key_file = tmp_path / "secrets.key"
    key_file.write_text(seeds["secrets-key-file"] + "\n", encoding="ascii")
    key_file.chmod(0o600)
    config = tmp_path / "controlplane.yaml"
    config.write_text(
        "server:\n  auth:\n    jwt_secret: ${LEAK_TEST_JWT}\n    api_key: env:LEAK_TEST_API_KEY\n"
        "  rate_limit_per_minute: 100000\n",
        encoding="utf-8",
    )
    env = _environment({
        "CONTROLPLANE_CONFIG": str(config),
        "LEAK_TEST_JWT": seeds["jwt-secret"],
        "LEAK_TEST_API_KEY": seeds["api-key"],
        "PGPASSWORD": seeds["db-password"],
        "CONTROLPLANE_METRICS_TOKEN": seeds["metrics-token"],
        "CONTROLPLANE_SECRETS_KEY_FILE": str(key_file),
        "CONTROLPLANE_DATABASE_URL": postgres_url,
        "CONTROLPLANE_STORAGE_BACKEND": "s3",
        "CONTROLPLANE_STORAGE_S3_BUCKET": new_bucket(s3_endpoint),
        "CONTROLPLANE_STORAGE_S3_ENDPOINT_URL": s3_endpoint,
        "CONTROLPLANE_STORAGE_S3_REGION": REGION,
        "AWS_ACCESS_KEY_ID": seeds["aws-access-key-id"],
        "AWS_SECRET_ACCESS_KEY": seeds["aws-secret-access-key"],
        "AWS_SESSION_TOKEN": seeds["aws-session-token"],
    })  # fmt: skip
    server = _launch(tmp_path, env, seeds["api-key"], [])
    return Start(server, seeds, seeds["api-key"], seeds["jwt-secret"], seeds["metrics-token"], postgres_url, 1)


@pytest.fixture(params=[start_in_environment, start_from_file], ids=["workers-2-environment", "one-process-file"])
def start(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    postgres_url: str,
    s3_endpoint: str,
    collector: tuple[str, list[str | None]],
) -> Iterator[Start]:
    asyncio.run(truncate(postgres_url))
    started: Start = request.param(tmp_path, postgres_url, s3_endpoint, collector)
    try:
        yield started
    finally:
        stop_server(started.server)


class Sweep:
    """Every answer the test received, for the final search."""

    def __init__(self, start: Start) -> None:
        self.start = start
        self.client = httpx.Client(base_url=start.server.url, headers=bearer(start.api_key), timeout=30)
        self.answers: list[tuple[str, httpx.Response]] = []

    def __call__(self, method: str, path: str, **options: Any) -> httpx.Response:
        response = self.client.request(method, path, **options)
        self.answers.append((f"{method} {path}", response))
        return response

    def created(self, path: str, **options: Any) -> dict[str, Any]:
        response = self("POST", path, **options)
        assert response.status_code == 201, response.text
        body: dict[str, Any] = response.json()
        return body


def _organization(sweep: Sweep) -> dict[str, str]:
    """One of each thing the GET routes name, their ids by path parameter."""
    ids = {"project_id": sweep.created("/api/v1/projects", json={"name": "Ops", "key": "OPS"})["id"]}
    ids["environment_id"] = sweep.created("/api/v1/environments", json={"name": "prod"})["id"]
    queue = f"/api/v1/environments/{ids['environment_id']}/worker-queues"
    ids["queue_id"] = sweep.created(queue, json={"name": "main"})["id"]
    ids["agent_id"] = sweep.created("/api/v1/agents", json={"name": "writer"})["id"]
    ids["team_id"] = sweep.created("/api/v1/teams", json={"name": "crew"})["id"]
    ids["secret_id"] = sweep.created("/api/v1/secrets", json={"name": "OPENAI_API_KEY", "value": "sk-own"})["id"]
    execute = {"prompt": "hello", "worker_queue_id": ids["queue_id"]}
    ids["execution_id"] = sweep.created(f"/api/v1/agents/{ids['agent_id']}/execute", json=execute)["id"]
    job = {"name": "on-push", "trigger": {"type": "webhook"}, "target": {"agent_id": ids["agent_id"]},
           "worker_queue_id": ids["queue_id"], "prompt": "review"}  # fmt: skip
    made = sweep.created("/api/v1/jobs", json=job, headers={"Host": EVIL_HOST})
    ids["job_id"] = made["id"]
    assert EVIL_HOST not in made["webhook_url"]  # (the public URL's, tests/security/test_public_url.py)
    upload = sweep(
        "PUT", f"/api/v1/storage/files/{NAMED['path']}", content=b"hello", headers={"Content-Type": "text/plain"}
    )
    assert upload.status_code == 201, upload.text  # the S3 store works with the credentials taken from the environment
    return ids


def _leak_attempt(sweep: Sweep, ids: dict[str, str]) -> str | None:
    """An organization admin's policy reading `opa.runtime().env`: refused when saved (a sandbox) or evaluated."""
    admin = bearer(make_jwt(ORG, sub="mallory", roles=["admin"], secret=sweep.start.jwt_secret))
    body = {"name": "leak", "rego": LEAK_POLICY, "actions": ["execute", "job.create"]}
    saved = sweep("POST", "/api/v1/policies", json=body, headers=admin)
    assert saved.status_code in (201, 422), saved.text
    if saved.status_code == 422:
        return None
    dry_run = {"action": "execute", "resource": {"type": "agent", "id": ids["agent_id"]}, "request": {"prompt": "x"}}
    assert sweep("POST", "/api/v1/policies/evaluate", json=dry_run, headers=admin).status_code == 200
    execute = {"prompt": "hello", "worker_queue_id": ids["queue_id"]}
    assert sweep("POST", f"/api/v1/agents/{ids['agent_id']}/execute", json=execute, headers=admin).status_code in (
        201,
        403,
    )
    policy_id: str = saved.json()["id"]
    return policy_id


def _get_routes(sweep: Sweep, ids: dict[str, str]) -> None:
    document = sweep("GET", "/api/openapi.json").json()
    for path, operations in document["paths"].items():
        get = operations.get("get")
        if get is None or "text/event-stream" in get.get("responses", {}).get("200", {}).get("content", {}):
            continue  # (a stream stays open; its first frames are the execution's, already read as JSON)
        concrete = path
        for name in [part[1:-1] for part in path.split("/") if part.startswith("{")]:
            concrete = concrete.replace(f"{{{name}}}", ids.get(name) or NAMED.get(name) or str(uuid.uuid4()))
        sweep("GET", concrete)
        sweep("GET", concrete, headers={"Authorization": ""})  # 401 (or the public routes' answers)
        sweep("GET", concrete, headers={"Authorization": "Bearer not-a-credential"})
    for name, missing in (("agents", uuid.uuid4()), ("jobs", uuid.uuid4()), ("secrets", uuid.uuid4())):
        assert sweep("GET", f"/api/v1/{name}/{missing}").status_code == 404


def _error_paths(sweep: Sweep) -> None:
    start = sweep.start
    forged = make_jwt(ORG, roles=["admin"], secret="not-the-server-secret-but-long-enough-for-hs256!")
    assert sweep("GET", "/api/v1/agents", headers=bearer(forged)).status_code == 401
    assert sweep("GET", "/api/v1/agents", headers={"Authorization": ""}).status_code == 401
    assert sweep("POST", "/api/v1/agents", json={"name": 5}).status_code == 422
    assert sweep("POST", "/api/v1/secrets", json={"name": "X"}).status_code == 422
    malformed = sweep("POST", "/api/v1/agents", content=b'{"name": ', headers={"Content-Type": "application/json"})
    assert 400 <= malformed.status_code < 500, malformed.text
    assert (
        sweep("POST", "/api/v1/webhooks/jobs/nothing", content=b"{}", headers={"Authorization": ""}).status_code < 500
    )
    assert sweep("GET", "/metrics", headers=bearer(start.metrics_token)).status_code == 200
    assert sweep("GET", "/metrics", headers=bearer("wrong")).status_code == 401
    assert sweep("GET", "/api/health", headers={"Authorization": ""}).status_code == 401
    assert sweep("GET", "/api/health").status_code == 200


def _decision_rows(start: Start) -> list[str]:
    """The policy_decisions table, each row as JSON text, read from the database itself."""
    import asyncpg

    async def read() -> list[str]:
        url = sa.make_url(start.database_url)
        connection = await asyncpg.connect(
            host=url.host, port=url.port or 5432, user=url.username, database=url.database
        )
        try:
            rows = await connection.fetch("SELECT row_to_json(d)::text AS row FROM policy_decisions d")
        finally:
            await connection.close()
        return [str(row["row"]) for row in rows]

    return asyncio.run(read())


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(child) for child in task.read_text().split()]
    return found


def _leaks(text: str, seeds: dict[str, str]) -> list[str]:
    return [name for name, value in seeds.items() if value in text]


def test_no_secret_of_the_server_reaches_an_answer_a_decision_or_a_log(start: Start) -> None:
    sweep = Sweep(start)
    ids = _organization(sweep)
    policy_id = _leak_attempt(sweep, ids)
    _get_routes(sweep, ids)
    _error_paths(sweep)
    if policy_id is not None:  # the decisions the execution logged (written behind: polled)
        wait_until(lambda: bool(sweep("GET", "/api/v1/policy-decisions").json()["items"]))
        decisions = sweep("GET", "/api/v1/policy-decisions", params={"policy_id": policy_id, "limit": 200})
        assert decisions.json()["items"], decisions.text
        rows = _decision_rows(start)
        assert rows
        assert [(index, _leaks(row, start.seeds)) for index, row in enumerate(rows) if _leaks(row, start.seeds)] == []
    assert len(sweep.answers) > 200
    failures = [(what, response.status_code) for what, response in sweep.answers if response.status_code >= 500]
    assert failures == []
    leaked = [
        (what, _leaks(response.text + repr(list(response.headers.items())), start.seeds))
        for what, response in sweep.answers
    ]
    assert [(what, names) for what, names in leaked if names] == []
    if start.workers > 1 and Path("/proc").is_dir():  # the server processes inherited an environment without them
        children = _children(start.server.process.pid)
        assert len(children) >= start.workers
        for child in children:
            environment = Path(f"/proc/{child}/environ").read_bytes().decode(errors="replace")
            assert not _leaks(environment, start.seeds), child
            assert not {line.split("=", 1)[0] for line in environment.split("\0")} & set(SECRET_VARIABLES)
    sweep.client.close()
    stop_server(start.server)
    log = start.server.log.read_text(errors="replace")
    assert "GET /api/v1/agents" in log  # (the access log and the debug lines were on)
    assert _leaks(log, start.seeds) == []
    if start.exported is not None:  # the exporter still sent its credential, read before it left the environment
        assert start.exported, "no OTLP export arrived"
        assert set(start.exported) == {f"Bearer {start.seeds['otlp-token']}"}
