"""Issue #31: a webhook's address may not reach a private network, whether the URL names a private address, an
IPv6 address that carries one (6to4, Teredo, NAT64, IPv4-compatible, IPv4-mapped or -translated), or a host whose
DNS answer turns private after the webhook was saved (checked again at delivery, against the address connected
to: no connection is made)."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.webhooks.sender import HttpSender
from controlplane_domain.webhooks.addresses import Address
from tests.conftest import BACKENDS, database_url
from tests.security.webhook_apps import TestResolver, deliveries, delivering_app
from tests.support import wait_until

PUBLIC = "https://93.184.215.14/hooks"


@pytest.mark.parametrize(
    ("url", "issue"),
    [
        ("https://[2002:7f00:1::]/", "2002:7f00:1:: (6to4) carries 127.0.0.1 is a loopback address"),
        ("https://[2002:a00:1::1]/", "(6to4) carries 10.0.0.1 is a private address"),
        ("https://[2002:a9fe:a9fe::]/", "(6to4) carries 169.254.169.254 is a cloud metadata address"),
        ("https://[2002:c0a8:1::]:8443/x", "(6to4) carries 192.168.0.1 is a private address"),
        # Teredo: server 65.54.227.120, client 192.0.2.45 (obfuscated: 3fff:fdd2 is ~c000:022d)
        ("https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "(Teredo) carries 192.0.2.45"),
        # Teredo whose client is loopback (~7f00:0001 = 80ff:fffe)
        ("https://[2001:0:4136:e378::80ff:fffe]/", "(Teredo) carries 127.0.0.1 is a loopback address"),
        ("https://[64:ff9b::7f00:1]/", "(NAT64) carries 127.0.0.1 is a loopback address"),
        ("https://[64:ff9b::10.1.2.3]/", "(NAT64) carries 10.1.2.3 is a private address"),
        ("https://[64:ff9b::169.254.169.254]/", "(NAT64) carries 169.254.169.254 is a cloud metadata address"),
        ("https://[64:ff9b:1::5db8:d70e]/", "local-use NAT64 address"),
        ("https://[::127.0.0.1]/", "(IPv4-compatible) carries 127.0.0.1 is a loopback address"),
        ("https://[::10.0.0.1]/", "(IPv4-compatible) carries 10.0.0.1 is a private address"),
        ("https://[::ffff:127.0.0.1]/", "127.0.0.1 is a loopback address"),
        ("https://[::ffff:169.254.169.254]/", "169.254.169.254 is a cloud metadata address"),
        ("https://[::ffff:0:192.168.1.1]/", "(IPv4-translated) carries 192.168.1.1 is a private address"),
    ],
)
@pytest.mark.parametrize("client", ["memory"], indirect=True)
def test_addresses_that_carry_a_private_one_are_refused_on_save(client: TestClient[Any], url: str, issue: str) -> None:
    refused = client.post("/api/v1/webhooks", json={"url": url, "events": ["*"]})
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["details"]["field"] == "url"
    assert issue in error["details"]["issue"], error
    assert "CONTROLPLANE_WEBHOOKS_ALLOW_PRIVATE" in error["details"]["issue"] or "not a public" in issue
    hook = client.post("/api/v1/webhooks", json={"url": PUBLIC, "events": ["*"]}).json()
    patched = client.patch(f"/api/v1/webhooks/{hook['id']}", json={"url": url})
    assert patched.status_code == 422, patched.text
    assert client.get(f"/api/v1/webhooks/{hook['id']}").json()["url"] == PUBLIC
    assert client.get("/api/v1/webhooks").json()["total"] == 1


@pytest.mark.parametrize(
    "url",
    [
        "https://[2002:5db8:d70e::1]/hooks",  # 6to4 of 93.184.215.14
        "https://[64:ff9b::93.184.215.14]/hooks",  # NAT64 (what a DNS64 resolver answers in an IPv6-only network)
        "https://[::ffff:93.184.215.14]/hooks",
    ],
)
@pytest.mark.parametrize("client", ["memory"], indirect=True)
def test_the_same_forms_carrying_a_public_address_are_accepted(client: TestClient[Any], url: str) -> None:
    created = client.post("/api/v1/webhooks", json={"url": url, "events": ["*"]})
    assert created.status_code == 201, created.text


@pytest.fixture
def listening() -> Iterator[socket.socket]:
    """A port on loopback that nobody serves: a connection to it waits in the backlog (so the test sees whether
    one was made), and the service's send hangs until its deadline."""
    with socket.create_server(("127.0.0.1", 0), backlog=8) as server:
        server.setblocking(False)
        yield server


def connections(server: socket.socket) -> int:
    """The connections made to `server` so far (each taken from its backlog)."""
    count = 0
    while True:
        try:
            accepted, _ = server.accept()
        except BlockingIOError:
            return count
        accepted.close()
        count += 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("allow_private", [False, True])
def test_a_name_that_turns_private_after_saving_is_refused_at_delivery_without_connecting(
    backend: str, allow_private: bool, tmp_path: Path, request: pytest.FixtureRequest, listening: socket.socket
) -> None:
    port = listening.getsockname()[1]
    resolver = TestResolver(hooks_example_test=["93.184.215.14"])  # public when the webhook is saved
    url = database_url(backend, tmp_path, request)
    with delivering_app(url, tmp_path, allow_private=allow_private, timeout_seconds=1.0, resolver=resolver) as client:
        created = client.post(
            "/api/v1/webhooks", json={"url": f"https://hooks.example.test:{port}/in", "events": ["*"]}
        )
        assert created.status_code == 201, created.text
        hook = created.json()
        resolver.answer("hooks.example.test", "127.0.0.1")  # ... and loopback (this test's port) when it is sent
        asked = resolver.asked
        assert client.post(f"/api/v1/webhooks/{hook['id']}/test").status_code == 202

        wait_until(lambda: [d["attempts"] for d in deliveries(client, hook["id"])] == [1])
        (delivery,) = deliveries(client, hook["id"])
        assert resolver.asked > asked  # resolved again at delivery
        if allow_private:
            # the operator allows loopback: the sender connects to the address it checked (the name is known only
            # to the test's resolver: a second look-up by the system would not find it), and the send, never
            # answered, ends at its deadline
            assert connections(listening) == 1
            assert delivery["last_error"].startswith("timed out"), delivery
        else:
            assert delivery["status"] == "pending"  # retried later: the name may turn public again
            assert delivery["response_code"] is None
            assert delivery["last_error"] == (
                "refused: 127.0.0.1 is a loopback address (CONTROLPLANE_WEBHOOKS_ALLOW_PRIVATE allows it)"
            )
            assert connections(listening) == 0


def test_a_name_that_resolves_to_a_carrying_address_is_refused_at_delivery(
    tmp_path: Path, listening: socket.socket
) -> None:
    port = listening.getsockname()[1]
    resolver = TestResolver(hooks_example_test=["93.184.215.14", "2606:4700::1111"])
    with delivering_app("memory://", tmp_path, allow_private=False, timeout_seconds=1.0, resolver=resolver) as client:
        hook = client.post("/api/v1/webhooks", json={"url": f"https://hooks.example.test:{port}/", "events": ["*"]})
        assert hook.status_code == 201, hook.text
        webhook_id = hook.json()["id"]
        resolver.answer("hooks.example.test", "93.184.215.14", "2002:7f00:1::")  # one of them 6to4 of loopback
        assert client.post(f"/api/v1/webhooks/{webhook_id}/test").status_code == 202
        wait_until(lambda: [d["attempts"] for d in deliveries(client, webhook_id)] == [1])
        (delivery,) = deliveries(client, webhook_id)
        assert delivery["last_error"].startswith("refused: 2002:7f00:1:: (6to4) carries 127.0.0.1"), delivery
        assert connections(listening) == 0


class SilentResolver(TestResolver):
    """A DNS that never answers."""

    async def __call__(self, host: str, port: int) -> list[Address]:
        await asyncio.Event().wait()
        return []


def test_a_host_whose_dns_never_answers_is_refused_on_save_within_the_deadline(tmp_path: Path) -> None:
    with delivering_app("memory://", tmp_path, allow_private=False, timeout_seconds=1.0,
                        resolver=SilentResolver()) as client:  # fmt: skip
        refused = client.post("/api/v1/webhooks", json={"url": "https://hooks.example.test/", "events": ["*"]})
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["details"]["issue"] == "the host did not resolve within 1 s"


class KeepAliveReceiver:
    """A receiver on loopback that keeps connections open (HTTP/1.1) and counts them, and the requests."""

    def __init__(self) -> None:
        counts = self.counts = {"connections": 0, "requests": 0}
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with lock:
                    counts["connections"] += 1

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with lock:
                    counts["requests"] += 1
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_connection_made_for_one_name_is_not_reused_for_another_name_at_the_same_address() -> None:
    """The sender connects to the address it checked, so that httpx pools by address: a connection made (and its
    TLS certificate verified) for one name must not carry another name's delivery."""
    receiver = KeepAliveReceiver()
    resolver = TestResolver(one_example_test=["127.0.0.1"], two_example_test=["127.0.0.1"])
    sender = HttpSender(allow_private=True, timeout_seconds=10.0, resolve=resolver)
    urls = [f"http://{name}.example.test:{receiver.port}/in" for name in ("one", "one", "two", "two", "one")]

    async def send_all() -> list[int | None]:
        secret = sender.new_secret()
        try:
            return [(await sender.send(url, "msg_1", datetime.now(UTC), "{}", secret)).status_code for url in urls]
        finally:
            await sender.close()

    try:
        assert asyncio.run(send_all()) == [204] * 5
        assert receiver.counts == {"connections": 2, "requests": 5}  # one a name, each kept
    finally:
        receiver.stop()
