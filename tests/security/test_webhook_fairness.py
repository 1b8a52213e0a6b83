"""Issue #36: a webhook receiver that answers 200 and then trickles its body (a byte a second, forever) holds one
send slot until the send's total deadline, not the dispatcher: another organization's delivery goes out while it
hangs, and one organization cannot hold more than its share of the slots."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BACKENDS, database_url
from tests.fakes.webhook_receiver import WebhookReceiver
from tests.security.webhook_apps import deliveries, delivering_app
from tests.support import PATIENCE, bearer, make_jwt, wait_until

DEADLINE = 5.0  # the test's send deadline (10 s by default): long enough for B's delivery on a busy machine
ORG_B = bearer(make_jwt("org-b", sub="admin-b", roles=["admin"]))


class TricklingReceiver:
    """A receiver on loopback that reads a request, answers `200` with its headers at once, then one byte of a
    body that never ends each second, until the client goes away. `requests` counts the requests read,
    `open` the connections still trickling."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self.requests = 0
        self.open = 0
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slow"

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _count(self, requests: int = 0, open_: int = 0) -> None:
        with self._lock:
            self.requests += requests
            self.open += open_

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            received = b""
            while b"\r\n\r\n" not in received:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                received += chunk
            head, _, body = received.partition(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)  # fmt: skip
            while len(body) < length:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                body += chunk
            self._count(requests=1, open_=1)
            try:
                connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 1000000\r\n\r\n")
                while not self._stopped.wait(1.0):  # a byte a second, until the client closes
                    connection.sendall(b".")
            except OSError:
                pass  # the client went away
            finally:
                self._count(open_=-1)

    def wait_for(self, requests: int, open_: int, timeout: float = PATIENCE) -> None:
        """Until `requests` requests were read and `open_` connections trickle."""
        wait_until(lambda: (self.requests, self.open) == (requests, open_), timeout=timeout)

    def stop(self) -> None:
        self._stopped.set()
        self._server.close()


@pytest.fixture
def trickling() -> Iterator[TricklingReceiver]:
    receiver = TricklingReceiver()
    yield receiver
    receiver.stop()


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    receiving = WebhookReceiver()
    yield receiving
    receiving.stop()


def create(client: Any, url: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    response = client.post("/api/v1/webhooks", json={"url": url, "events": ["*"]}, headers=headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def send_test_event(client: Any, webhook_id: str, headers: dict[str, str] | None = None) -> None:
    assert client.post(f"/api/v1/webhooks/{webhook_id}/test", headers=headers).status_code == 202


def attempts(client: Any, webhook_id: str, headers: dict[str, str] | None = None) -> list[int]:
    return [each["attempts"] for each in deliveries(client, webhook_id, **(headers or {}))]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_trickling_receiver_delays_no_other_organization_and_fails_at_the_deadline(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, trickling: TricklingReceiver,
    receiver: WebhookReceiver,
) -> None:  # fmt: skip
    url = database_url(backend, tmp_path, request)
    with delivering_app(url, tmp_path, allow_private=True, timeout_seconds=DEADLINE) as client:
        slow = create(client, trickling.url)  # organization `default`
        fast = create(client, receiver.url, ORG_B)
        send_test_event(client, slow["id"])
        trickling.wait_for(requests=1, open_=1)  # A's receiver answered 200 and trickles its body

        send_test_event(client, fast["id"], ORG_B)
        wait_until(lambda: len(receiver.messages()) == 1)
        assert attempts(client, slow["id"]) == [0]  # B got its event while A's send still hangs
        assert trickling.open == 1
        wait_until(lambda: attempts(client, fast["id"], ORG_B) == [1])
        (delivered,) = deliveries(client, fast["id"], **ORG_B)
        assert (delivered["status"], delivered["response_code"]) == ("succeeded", 204)

        wait_until(lambda: attempts(client, slow["id"]) == [1])
        (cut,) = deliveries(client, slow["id"])
        assert cut["status"] == "pending"  # a failed attempt, retried later
        assert cut["response_code"] is None
        assert cut["last_error"].startswith("timed out: the send's deadline (5 s"), cut
        assert cut["latency_ms"] >= DEADLINE * 1000 - 1
        trickling.wait_for(requests=1, open_=0)  # the service closed the connection


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_organization_holds_at_most_its_share_of_the_send_slots(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, trickling: TricklingReceiver,
    receiver: WebhookReceiver,
) -> None:  # fmt: skip
    url = database_url(backend, tmp_path, request)
    with delivering_app(
        url, tmp_path, allow_private=True, timeout_seconds=DEADLINE, webhooks_concurrency=3,
        webhooks_organization_concurrency=2,
    ) as client:  # fmt: skip
        slow = [create(client, f"{trickling.url}/{number}") for number in range(3)]  # organization `default`
        fast = create(client, receiver.url, ORG_B)
        for hook in slow:
            send_test_event(client, hook["id"])
        trickling.wait_for(requests=2, open_=2)  # two of A's three sends hang: A's share of the three slots

        send_test_event(client, fast["id"], ORG_B)
        wait_until(lambda: len(receiver.messages()) == 1)  # the third slot
        assert trickling.requests == 2
        assert sorted(attempt for hook in slow for attempt in attempts(client, hook["id"])) == [0, 0, 0]

        trickling.wait_for(requests=3, open_=1)  # A's first two cut at the deadline, then the third
        wait_until(lambda: sorted(attempt for hook in slow for attempt in attempts(client, hook["id"])) == [0, 1, 1])
