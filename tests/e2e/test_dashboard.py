"""The operator dashboard in a real headless Chromium (Debian's package, driven by Playwright), against a real
server: sign in with a key, watch an execution live over its SSE stream, see workers, queues, jobs and runs.
Screenshots are kept in `test-artifacts/dashboard/` (or $CONTROLPLANE_TEST_ARTIFACTS) for a person to look at.
The API's Swagger page (`/api/docs`) is driven the same way, with every request off loopback refused."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.conftest import Server
from tests.e2e.test_executions import make_agent, make_queue, run
from tests.support import SERVICE_KEY

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = (
    Path(os.environ.get("CONTROLPLANE_TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts")) / "dashboard"
)
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # `make test` installs it (the dev extra): missing means a broken install
        pytest.fail(f"playwright is not installed: {exc}")
    if not Path(CHROMIUM).exists():
        message = "Debian's chromium is not installed (make test installs it: `make browser-tools`)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(f"SKIPPED LOUDLY: {message}")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield launched
        finally:
            launched.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_an_operator_signs_in_and_watches_an_execution_live(sqlite_server: Server, browser: Any) -> None:
    from playwright.sync_api import expect

    client = sqlite_server.client()
    queue_id = make_queue(client)
    agent_id = make_agent(client)
    execution = run(client, agent_id, queue_id, "summarise the week")
    beat = client.post("/api/v1/workers/heartbeat", json={"worker_id": "dash-w1", "environment_name": "e2e"})
    assert beat.status_code == 200, beat.text

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{sqlite_server.url}/dashboard")
    expect(page.locator("#signin-panel")).to_be_visible()

    page.fill("#key", "not-a-key")
    page.click("#signin button[type=submit]")
    expect(page.locator("#signin-error")).to_have_text("That key was refused.")
    shot(page, "01-refused")

    page.fill("#key", SERVICE_KEY)
    page.click("#signin button[type=submit]")
    row = page.locator(f"#table tbody tr[data-id='{execution['id']}']")
    expect(row).to_contain_text("queued")
    shot(page, "02-executions")

    row.click()
    expect(page.locator("#detail-title")).to_have_text(f"Execution {execution['id']}")
    leased = client.post(f"/api/v1/worker-queues/{queue_id}/lease", json={"worker_id": "dash-w1", "wait_seconds": 0})
    assert leased.status_code == 200, leased.text
    path = f"/api/v1/executions/{execution['id']}"
    chunks = [{"type": "message_chunk", "data": {"text": "Hel"}}, {"type": "message_chunk", "data": {"text": "lo"}}]
    sent = client.post(f"{path}/events", json={"worker_id": "dash-w1", "attempt": 1, "events": chunks})
    assert sent.status_code == 200, sent.text
    expect(page.locator("#events li[data-type=message_chunk]")).to_have_count(2)
    expect(page.locator("#events")).to_contain_text("message_chunk: lo")
    expect(page.locator("#detail-state")).to_have_text("status: running (live)")
    done = {"worker_id": "dash-w1", "attempt": 1, "status": "completed", "response": "Hello"}
    assert client.post(f"{path}/complete", json=done).status_code == 200
    expect(page.locator("#detail-state")).to_have_text("status: completed (finished)")
    shot(page, "03-live-execution")

    page.click("#tabs button[data-tab=workers]")
    expect(page.locator("#table tbody")).to_contain_text("dash-w1")
    page.click("#tabs button[data-tab=queues]")
    expect(page.locator("#table tbody")).to_contain_text(queue_id)
    shot(page, "04-queues")

    job = client.post(
        "/api/v1/jobs",
        json={"name": "nightly", "trigger": {"type": "manual"}, "target": {"agent_id": agent_id},
              "prompt": "report", "worker_queue_id": queue_id},
    )  # fmt: skip
    assert job.status_code == 201, job.text
    page.click("#tabs button[data-tab=jobs]")
    expect(page.locator("#table tbody")).to_contain_text("nightly")
    page.click("#tabs button[data-tab=runs]")
    expect(page.locator("#status")).to_have_text("Nothing here yet.")
    page.click("#tabs button[data-tab=webhooks]")
    expect(page.locator("#status")).not_to_be_empty()
    shot(page, "05-webhooks")

    page.click("#signout")
    expect(page.locator("#signin-panel")).to_be_visible()
    assert errors == [], f"the page raised: {errors}"


def test_the_dashboard_is_public_strict_and_outside_the_api_document(sqlite_server: Server) -> None:
    page = httpx.get(f"{sqlite_server.url}/dashboard", timeout=5)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    script = httpx.get(f"{sqlite_server.url}/dashboard/static/app.js", timeout=5)
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert httpx.get(f"{sqlite_server.url}/dashboard/static/secrets.txt", timeout=5).status_code == 404
    assert httpx.get(f"{sqlite_server.url}/dashboard/static/..%2F..%2Fapp.py", timeout=5).status_code == 404
    document = httpx.get(f"{sqlite_server.url}/api/openapi.json", timeout=5).json()
    assert not any(path.startswith("/dashboard") for path in document["paths"])
    assert httpx.get(f"{sqlite_server.url}/api/v1/executions", timeout=5).status_code == 401, "the API stays closed"


def test_the_api_docs_render_without_internet(sqlite_server: Server, browser: Any) -> None:
    """Swagger UI comes from the package: with every request that leaves loopback refused, none is even tried,
    and the page lists the operations of the document and opens one."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    requested: list[str] = []
    refused: list[str] = []

    def only_loopback(route: Any) -> None:
        url = route.request.url
        requested.append(url)
        if urlsplit(url).hostname == "127.0.0.1" or url.startswith("data:"):
            route.continue_()
        else:
            refused.append(url)
            route.abort("internetdisconnected")

    context.route("**/*", only_loopback)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{sqlite_server.url}/api/docs")
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("Agent Control Plane API")
        listing = page.locator("#operations-agents-listAgents")
        expect(listing).to_contain_text("GET")
        expect(listing).to_contain_text("/api/v1/agents")
        listing.locator(".opblock-summary-control").click()  # opens the operation: its parameters, as documented
        expect(listing.locator(".parameters-container")).to_contain_text("limit")
        shot(page, "06-api-docs-offline")
    finally:
        context.close()
    assert refused == [], f"the page reached outside the service: {refused}"
    assert any("/api/docs/assets/" in url for url in requested), requested
    assert errors == [], f"the page raised: {errors}"
