"""Apps that deliver webhooks for the security tests: a test resolver (the DNS the sender asks), a short send
deadline, and loopback receivers allowed or not."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.settings.storage import StorageSettings
from controlplane_adapters.webhooks.sender import Resolver
from controlplane_domain.webhooks.addresses import Address
from controlplane_http.bootstrap import build_app
from tests.conftest import app_settings
from tests.support import SERVICE_KEY, bearer


class TestResolver:
    """A DNS the test controls: `names[host]` are the host's addresses (a name it does not know does not resolve);
    `asked` counts the look-ups."""

    __test__ = False

    def __init__(self, **names: list[str]) -> None:
        self.names: dict[str, list[Address]] = {}
        self.asked = 0
        for host, addresses in names.items():
            self.answer(host.replace("_", "."), *addresses)

    def answer(self, host: str, *addresses: str) -> None:
        self.names[host] = [ipaddress.ip_address(each) for each in addresses]

    async def __call__(self, host: str, port: int) -> list[Address]:
        self.asked += 1
        return list(self.names.get(host, []))


@contextmanager
def delivering_app(
    url: str, tmp_path: Path, *, allow_private: bool, timeout_seconds: float = 10.0,
    resolver: Resolver | None = None, **more: Any,
) -> Iterator[TestClient[Any]]:  # fmt: skip
    """A client (the service key: organization `default`'s admin) of an app whose dispatcher runs."""
    settings = app_settings(
        url, webhooks_deliver=True, webhooks_allow_private=allow_private,
        storage=StorageSettings(directory=str(tmp_path / "storage"), durable=False),
    )  # fmt: skip
    settings = replace(settings, webhooks_timeout_seconds=timeout_seconds, **more)
    app = build_app(settings, clock=ManualClock(), webhook_resolver=resolver)
    with TestClient(app) as client:
        client.headers.update(bearer(SERVICE_KEY))
        yield client


def deliveries(client: TestClient[Any], webhook_id: str, **headers: str) -> list[dict[str, Any]]:
    response = client.get(f"/api/v1/webhooks/{webhook_id}/deliveries", headers=headers or None)
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items
