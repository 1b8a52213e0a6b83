"""The operator console in a real headless Chromium (Debian's package, driven by Playwright), against a real
server: sign in, issue a key and sign in with it, watch an execution stream to its end, cancel one, a viewer sees
no write button. Every request that leaves loopback is aborted and asserted absent (the assets ship in the
package). Screenshots are kept in `test-artifacts/dashboard/` (or $CONTROLPLANE_TEST_ARTIFACTS) for a person to look
at. The API's Swagger page (`/api/docs`) is driven the same way."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.conftest import FAST, Server, start_server, stop_server
from tests.e2e.test_executions import make_agent, make_queue, run, unique
from tests.fakes.webhook_receiver import WebhookReceiver
from tests.support import SECRETS_KEY, SERVICE_KEY, make_jwt, wait_until

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
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the module (SQLite; short heartbeats and keep-alives; webhooks to loopback allowed)."""
    directory = tmp_path_factory.mktemp("console")
    server = start_server(
        directory, f"sqlite+aiosqlite:///{directory / 'console.db'}", **FAST,
        CONTROLPLANE_WEBHOOKS_ALLOW_PRIVATE="true", CONTROLPLANE_SECRETS_KEY=SECRETS_KEY,
        CONTROLPLANE_SCHEDULER_INTERVAL_MS="200",
    )  # fmt: skip
    try:
        yield server
    finally:
        stop_server(server)


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


class Tab:
    """A browser context whose requests off loopback are aborted (and remembered), and its page's errors."""

    def __init__(self, browser: Any, **options: Any) -> None:
        self.requested: list[str] = []
        self.refused: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 800}, **options)
        self.context.route("**/*", self._only_loopback)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", self._refused_by_policy)

    def _refused_by_policy(self, message: Any) -> None:
        """What the Content-Security-Policy refused (an inline script or style, an eval): none may be."""
        if "Content Security Policy" in message.text:
            self.errors.append(message.text)

    def _only_loopback(self, route: Any) -> None:
        url = route.request.url
        self.requested.append(url)
        if urlsplit(url).hostname == "127.0.0.1" or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.refused.append(url)
            route.abort("internetdisconnected")

    def close(self) -> None:
        self.context.close()
        assert self.refused == [], f"the page reached outside the service: {self.refused}"
        assert self.errors == [], f"the page raised: {self.errors}"


@pytest.fixture
def tab(browser: Any) -> Iterator[Tab]:
    opened = Tab(browser)
    yield opened
    opened.close()


def shot(page: Any, name: str, *hidden: str) -> None:
    """A full-page screenshot, the elements matching `hidden` painted over (a key shown once)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    masks = [page.locator(selector) for selector in hidden]
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True, mask=masks)


def sign_in(page: Any, server: Server, credential: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{server.url}/dashboard")
    page.fill("#key", credential)
    page.click("#signin button[type=submit]")
    expect(page.locator("#signin-panel")).to_be_hidden()


def test_an_admin_issues_a_key_and_its_viewer_sees_no_write_button(console: Server, tab: Tab) -> None:
    from playwright.sync_api import expect

    client = console.client()
    queue_id = make_queue(client)
    agent_name = unique("keyed")
    agent_id = make_agent(client, agent_name)
    execution = run(client, agent_id, queue_id, "wait in the queue")
    page = tab.page

    page.goto(f"{console.url}/dashboard")
    page.fill("#key", "not-a-key")
    page.click("#signin button[type=submit]")
    expect(page.locator("#signin-error")).to_have_text("That credential was refused.")
    shot(page, "01-sign-in")

    sign_in(page, console, SERVICE_KEY)
    expect(page.locator("#who")).to_contain_text("admin")
    expect(page.locator("#tile-running")).to_be_visible()
    expect(page.locator("#chart-executions canvas")).to_have_count(1)
    charts = page.locator("#charts")
    expect(charts).to_have_attribute("data-span", "24h")
    expect(charts).to_have_attribute("data-points", "25")  # the hours that overlap the last 24 hours
    drawn = int(charts.get_attribute("data-executions") or 0)
    assert drawn >= 1, "the execution made above is on the chart"
    shot(page, "02-overview")
    page.click(".segmented button[data-span='7d']")
    expect(charts).to_have_attribute("data-span", "7d")
    expect(charts).to_have_attribute("data-points", "169")
    page.click("#tile-queued")  # a tile opens the executions it counts
    expect(page.locator("#filter-status")).to_have_value("queued")
    expect(page.locator(f"#results tbody tr[data-id='{execution['id']}']")).to_contain_text(agent_name)
    assert (
        page.locator("#results tbody tr .badge").all_inner_texts()
        == ["queued"] * page.locator("#results tbody tr").count()
    )

    page.click("#nav a[data-view=keys]")
    name = unique("viewer-key")
    page.fill("#key-name", name)
    page.select_option("#key-role", "viewer")
    page.click("#issue-key button[type=submit]")
    expect(page.locator("#new-key")).to_contain_text("cpk_")
    expect(page.locator("#copy-key")).to_be_visible()
    key = page.locator("#new-key").inner_text()
    expect(page.locator("#key-list tbody")).to_contain_text(name)
    expect(page.locator("#key-role")).to_have_value("member")  # the form is ready for the next key
    shot(page, "03-api-keys", "#new-key")
    issued = [k for k in client.get("/api/v1/api-keys", params={"limit": 100}).json()["items"] if k["name"] == name]
    assert [k["role"] for k in issued] == ["viewer"], "the key the page issued is the API's"

    page.click("#signout")
    sign_in(page, console, key)
    expect(page.locator("#who")).to_contain_text("viewer")
    expect(page.locator("#nav a[data-view=keys]")).to_be_hidden()
    page.goto(f"{console.url}/dashboard#/executions/{execution['id']}")
    expect(page.locator("#detail-state")).to_have_text("status: queued (live)")
    expect(page.locator("#facts")).to_contain_text(agent_name)
    for view in ("executions", "jobs", "workflows", "governance", "overview"):
        page.click(f"#nav a[data-view={view}]")
        expect(page.locator("main h1")).to_be_visible()
        expect(page.locator("main > .loading")).to_have_count(0)
        assert page.locator("button.action").count() == 0, f"a viewer sees a write button on {view}"
    assert page.locator("#issue-key").count() == 0
    for section in ("policies", "secrets", "webhooks", "storage"):
        page.goto(f"{console.url}/dashboard#/governance/{section}")
        expect(page.locator("#governance-body")).to_have_attribute("data-drawn", section)
        writes = page.locator("main button.action, main form button[type=submit]")
        assert writes.count() == 0, f"a viewer sees a write button on {section}"

    assert client.delete(f"/api/v1/api-keys/{issued[0]['id']}").status_code == 204  # revoked while signed in
    page.click("#nav a[data-view=executions]")
    expect(page.locator("#signin-error")).to_have_text("The credential was refused (401): sign in again.")
    expect(page.locator("#signin-panel")).to_be_visible()
    assert page.evaluate("sessionStorage.getItem('controlplane.credential')") is None, "the tab forgot it"

    sign_in(page, console, make_jwt("default", sub="ada", roles=["member"]))  # a JWT is a credential too
    expect(page.locator("#who")).to_have_text("ada · member · default")
    page.goto(f"{console.url}/dashboard#/executions/{execution['id']}")
    expect(page.locator("button[data-action=cancel]")).to_be_visible()  # a member may cancel


def test_an_operator_watches_an_execution_stream_to_its_end_and_cancels_one(console: Server, tab: Tab) -> None:
    from playwright.sync_api import expect

    client = console.client()
    queue_id = make_queue(client)
    agent_name, model = unique("streamer"), unique("priced-model")
    priced = {"value": model, "provider": "p", "input_cost_per_million": 2.5, "output_cost_per_million": 10}
    assert client.post("/api/v1/models", json=priced).status_code == 201
    agent_id = make_agent(client, agent_name, model_id=model)
    doomed = run(client, agent_id, queue_id, "never mind")
    execution = run(client, agent_id, queue_id, "summarise the week")
    worker = unique("dash-w")
    beat = client.post("/api/v1/workers/heartbeat", json={"worker_id": worker, "environment_name": "e2e"})
    assert beat.status_code == 200, beat.text
    page = tab.page
    sign_in(page, console, SERVICE_KEY)

    page.click("#nav a[data-view=executions]")
    page.select_option("#filter-agent_id", agent_id)
    rows = page.locator("#results tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text(agent_name)  # names, not ids
    shot(page, "04-executions")

    page.goto(f"{console.url}/dashboard#/executions/{doomed['id']}")
    expect(page.locator("#detail-state")).to_have_text("status: queued (live)")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button[data-action=cancel]")
    expect(page.locator("#detail-state")).to_have_text("status: cancelled (finished)")
    assert client.get(f"/api/v1/executions/{doomed['id']}").json()["status"] == "cancelled"

    page.goto(f"{console.url}/dashboard#/executions/{execution['id']}")
    expect(page.locator("#detail-title")).to_have_text(f"Execution {execution['id']}")
    expect(page.locator("#detail-state")).to_have_text("status: queued (live)")
    leased = client.post(f"/api/v1/worker-queues/{queue_id}/lease", json={"worker_id": worker, "wait_seconds": 0})
    assert leased.status_code == 200, leased.text
    assert leased.json()["execution"]["id"] == execution["id"]
    path = f"/api/v1/executions/{execution['id']}"
    expect(page.locator("#detail-state")).to_have_text("status: running (live)")
    for token in ("Hel", "lo", " world"):
        chunk = [{"type": "message_chunk", "data": {"text": token}}]
        sent = client.post(f"{path}/events", json={"worker_id": worker, "attempt": 1, "events": chunk})
        assert sent.status_code == 200, sent.text
        expect(page.locator("#events li[data-type=message_chunk]").last).to_contain_text(token)
    expect(page.locator("#output")).to_have_text("Hello world")  # token by token, as they came
    done = {"worker_id": worker, "attempt": 1, "status": "completed", "response": "Hello world",
            "usage": {"prompt_tokens": 12, "completion_tokens": 3}}  # fmt: skip
    assert client.post(f"{path}/complete", json=done).status_code == 200
    expect(page.locator("#detail-state")).to_have_text("status: completed (finished)")
    expect(page.locator("#events li[data-type=done]")).to_have_count(1)
    expect(page.locator("#facts")).to_contain_text("prompt tokens")
    expect(page.locator("#facts")).to_contain_text("Cost0.000060")  # 12 * 2.5 / 10^6 + 3 * 10 / 10^6
    expect(page.locator("#context pre")).to_contain_text(execution["id"])
    assert page.locator("button[data-action=cancel]").count() == 0, "a finished execution offers no cancel"
    shot(page, "05-execution-live")

    page.click("#nav a[data-view=fleet]")
    expect(page.locator("#workers tbody")).to_contain_text(worker)
    shot(page, "06-fleet")


def test_the_console_is_public_strict_and_outside_the_api_document(console: Server) -> None:
    url = console.url
    page = httpx.get(f"{url}/dashboard", timeout=5)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "<script>" not in page.text, "no inline script"
    for asset, media in (("app.js", "text/javascript"), ("views/executions.js", "text/javascript"),
                         ("vendor/uplot/uPlot.esm.js", "text/javascript"), ("app.css", "text/css")):  # fmt: skip
        answer = httpx.get(f"{url}/dashboard/static/{asset}", timeout=5)
        assert answer.status_code == 200, asset
        assert answer.headers["content-type"].startswith(media)
    assert httpx.get(f"{url}/dashboard/static/secrets.txt", timeout=5).status_code == 404
    assert httpx.get(f"{url}/dashboard/static/vendor/uplot/LICENSE", timeout=5).status_code == 404
    assert httpx.get(f"{url}/dashboard/static/..%2F..%2Fapp.py", timeout=5).status_code == 404
    assert httpx.get(f"{url}/dashboard/static/../controller.py", timeout=5).status_code == 404
    document = httpx.get(f"{url}/api/openapi.json", timeout=5).json()
    assert not any(path.startswith("/dashboard") for path in document["paths"])
    assert httpx.get(f"{url}/api/v1/executions", timeout=5).status_code == 401, "the API stays closed"


def test_the_api_docs_render_without_internet(console: Server, tab: Tab) -> None:
    """Swagger UI comes from the package: with every request that leaves loopback refused, none is even tried,
    and the page lists the operations of the document and opens one."""
    from playwright.sync_api import expect

    page = tab.page
    page.goto(f"{console.url}/api/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Agent Control Plane API")
    listing = page.locator("#operations-agents-listAgents")
    expect(listing).to_contain_text("GET")
    expect(listing).to_contain_text("/api/v1/agents")
    listing.locator(".opblock-summary-control").click()  # opens the operation: its parameters, as documented
    expect(listing.locator(".parameters-container")).to_contain_text("limit")
    shot(page, "99-api-docs-offline")
    assert any("/api/docs/assets/" in url for url in tab.requested), tab.requested


def finish_step(client: httpx.Client, queue_id: str, worker: str, response: str) -> str:
    """Lease the queue's next execution (a workflow step's) and complete it: its id."""
    leased = client.post(f"/api/v1/worker-queues/{queue_id}/lease", json={"worker_id": worker, "wait_seconds": 0})
    assert leased.status_code == 200, leased.text
    execution_id = str(leased.json()["execution"]["id"])
    done = {"worker_id": worker, "attempt": 1, "status": "completed", "response": response}
    assert client.post(f"/api/v1/executions/{execution_id}/complete", json=done).status_code == 200
    return execution_id


def test_a_workflow_dag_changes_colour_as_it_runs(console: Server, tab: Tab) -> None:
    from playwright.sync_api import expect

    client = console.client()
    queue_id = make_queue(client)
    agent_id = make_agent(client)
    worker = unique("dag-w")
    assert client.post("/api/v1/workers/heartbeat", json={"worker_id": worker, "environment_name": "e2e"}).is_success
    steps = [{"id": "gather", "agent_id": agent_id, "prompt": "gather"},
             {"id": "write", "agent_id": agent_id, "prompt": "write", "depends_on": ["gather"]}]  # fmt: skip
    workflow = client.post("/api/v1/workflows", json={"name": unique("notes"), "steps": steps})
    assert workflow.status_code == 201, workflow.text
    workflow_id = workflow.json()["id"]
    page = tab.page
    sign_in(page, console, SERVICE_KEY)
    page.goto(f"{console.url}/dashboard#/workflows/{workflow_id}")
    expect(page.locator("#dag canvas").first).to_be_attached()
    expect(page.locator("#run-state")).to_have_text("no run chosen")

    page.select_option("#run-queue", queue_id)
    page.click("button[data-action=start-run]")
    dag = page.locator("#dag")
    expect(dag).to_have_attribute("data-statuses", '{"gather":"running","write":"pending"}')
    shot(page, "07-workflow-running")
    finish_step(client, queue_id, worker, "gathered")
    expect(dag).to_have_attribute("data-statuses", '{"gather":"succeeded","write":"running"}')  # live, no reload
    finish_step(client, queue_id, worker, "written")
    expect(dag).to_have_attribute("data-statuses", '{"gather":"succeeded","write":"succeeded"}')
    expect(page.locator("#run-state")).to_contain_text("succeeded")
    shot(page, "08-workflow-succeeded")

    job = client.post("/api/v1/jobs", json={"name": unique("weekly-notes"), "trigger": {"type": "manual"},
                                            "target": {"workflow_id": workflow_id}, "prompt": "notes",
                                            "worker_queue_id": queue_id})  # fmt: skip
    assert job.status_code == 201, job.text
    page.click("#nav a[data-view=jobs]")
    row = page.locator(f"#job-list tbody tr:has(a[href='#/jobs/{job.json()['id']}'])")
    expect(row).to_contain_text("never")
    row.locator("button[data-action=trigger]").click()
    expect(row).to_contain_text("fired")
    row.locator("button[data-action=disable]").click()
    expect(row.locator("button[data-action=enable]")).to_be_visible()
    assert client.get(f"/api/v1/jobs/{job.json()['id']}").json()["enabled"] is False
    assert client.get(f"/api/v1/jobs/{job.json()['id']}/runs").json()["total"] == 1
    shot(page, "11-jobs")


def test_an_admin_redelivers_a_delivery_and_sees_the_compilers_error(console: Server, tab: Tab) -> None:
    from playwright.sync_api import expect

    client = console.client()
    receiver = WebhookReceiver()
    try:
        hook = client.post("/api/v1/webhooks", json={"url": receiver.url, "events": ["error"]})
        assert hook.status_code == 201, hook.text
        webhook_id = hook.json()["id"]
        assert client.post(f"/api/v1/webhooks/{webhook_id}/test").status_code == 202

        def delivered() -> list[dict[str, Any]]:
            items: list[dict[str, Any]] = client.get(f"/api/v1/webhooks/{webhook_id}/deliveries").json()["items"]
            return items

        wait_until(lambda: [d["status"] for d in delivered()] == ["succeeded"])
        page = tab.page
        sign_in(page, console, SERVICE_KEY)
        page.goto(f"{console.url}/dashboard#/governance/webhooks")
        rows = page.locator("#delivery-list tbody tr")
        expect(rows.filter(has_text=receiver.url)).to_have_count(1)
        page.once("dialog", lambda dialog: dialog.accept())
        rows.filter(has_text=receiver.url).locator("button[data-action=redeliver]").click()
        expect(page.locator("#notice")).to_have_text("Queued again.")
        wait_until(lambda: sorted(d["status"] for d in delivered()) == ["succeeded", "succeeded"])
        assert len(receiver.messages()) == 2, "the receiver got the event again"
        shot(page, "09-webhooks")
    finally:
        receiver.stop()

    page.goto(f"{console.url}/dashboard#/governance/policies")
    page.fill("#policy-name", unique("broken"))
    page.fill("#policy-rego", "package controlplane\n\ndeny contains msg if {\n  msg = = 1\n}\n")
    page.click("button[data-action=save-policy]")
    expect(page.locator("#policy-problems li")).to_contain_text("line 4")
    shot(page, "10-policy-error")


def test_every_page_reads_on_a_phone_in_the_dark_and_by_keyboard(console: Server, browser: Any) -> None:
    """At 390x844 with the system's dark theme: each page draws without a horizontal scroll bar, on the dark
    palette; sign-in, the navigation and a row of the executions work from the keyboard alone."""
    from playwright.sync_api import expect

    client = console.client()
    queue_id = make_queue(client)
    execution = run(client, make_agent(client, unique("phone")), queue_id, "from a phone")
    phone = Tab(browser, is_mobile=True, has_touch=True, color_scheme="dark")
    phone.context.set_default_timeout(10_000)
    phone.page.set_viewport_size({"width": 390, "height": 844})
    page = phone.page
    try:
        page.goto(f"{console.url}/dashboard")
        page.keyboard.press("Tab")  # the skip link first, then the key field (focused already)
        page.locator("#key").focus()
        page.keyboard.type(SERVICE_KEY)
        page.keyboard.press("Enter")
        expect(page.locator("#signin-panel")).to_be_hidden()
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(15, 17, 21)", f"the dark theme follows the system: {background}"
        for view, section in (("overview", ""), ("executions", ""), ("workflows", ""), ("jobs", ""), ("fleet", ""),
                              ("governance", "policies"), ("governance", "audit"), ("governance", "secrets"),
                              ("governance", "storage"), ("keys", "")):  # fmt: skip
            page.goto(f"{console.url}/dashboard#/{view}/{section}")
            expect(page.locator("main h1")).to_be_visible()
            expect(page.locator("main .loading")).to_have_count(0)
            width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1], f"{view} {section} scrolls sideways on a phone: {width}"
            shot(page, f"phone-{view}{'-' + section if section else ''}")

        page.goto(f"{console.url}/dashboard#/executions")
        row = page.locator(f"#results tbody tr[data-id='{execution['id']}']")
        row.focus()
        page.keyboard.press("Enter")
        expect(page.locator("#detail-title")).to_have_text(f"Execution {execution['id']}")
    finally:
        phone.close()
