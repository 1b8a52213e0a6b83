"""Helpers shared by the tests: adapters wired for a test, tokens, a loopback HTTP helper."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import jwt
import pytest

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.memory.store import MemoryStore
from controlplane_adapters.schemas import JsonSchemaValidator
from controlplane_domain.owners import OWNERS
from controlplane_domain.ports import Clock, Ports
from controlplane_domain.workers.heartbeats import HeartbeatBuffer

SERVICE_KEY = "test-service-key"
JWT_SECRET = "test-jwt-secret-that-is-long-enough-for-hs256-and-hs512-signatures!"
DEFAULT_ORG = "default"
SECRETS_KEY = "c2VjcmV0cy1rZXktZm9yLXRoZS10ZXN0cy0zMmJ5dGU="  # base64 of 32 bytes


def memory_ports(clock: Clock | None = None, heartbeat_interval: int = 30, *, write_behind: bool = False) -> Ports:
    """Ports on a fresh memory store; `write_behind` wires a heartbeat buffer (flushed by the test)."""
    store = MemoryStore()
    return Ports(
        uow=store.unit_of_work,
        reader=store.read_unit_of_work,
        clock=clock or ManualClock(),
        ids=UuidGenerator(),
        worker_heartbeat_interval_seconds=heartbeat_interval,
        heartbeats=HeartbeatBuffer() if write_behind else None,
        schemas=JsonSchemaValidator(),
        owners=OWNERS,
    )


def make_jwt(
    org: str,
    *,
    sub: str = "user-1",
    roles: list[str] | None = None,
    secret: str = JWT_SECRET,
    algorithm: str = "HS256",
    expires_in: int = 3600,
    **claims: Any,
) -> str:
    payload: dict[str, Any] = {"sub": sub, "org_id": org, "exp": int(time.time()) + expires_in, **claims}
    if roles is not None:
        payload["roles"] = roles
    return jwt.encode(payload, secret, algorithm=algorithm)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


PATIENCE = 60.0
"""Seconds a wait gives up after: an outer guard against a hang, never the property under test. Generous: on a
busy 2-core machine (other test processes, other suites) a server's start took 30 s of wall time for 2 s of CPU."""


def wait_until(check: Callable[[], bool], timeout: float = PATIENCE, interval: float = 0.05) -> None:
    """Poll `check` until it holds or the deadline passes (never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} seconds")


def wait_for_answer(
    probe: Callable[[httpx.Client], httpx.Response],
    *,
    alive: Callable[[], None] | None = None,
    timeout: float = PATIENCE,
) -> None:
    """Poll `probe` (a request on the client it is given) until it answers 2xx; `alive` raises when the process
    that should answer has exited. One client for every poll: `httpx.get` builds a client, and its TLS context,
    at each call (25 ms of CPU: a third of the time between two polls, taken from the server starting up)."""
    with httpx.Client(timeout=1, trust_env=False) as client:

        def answers() -> bool:
            if alive is not None:
                alive()
            try:
                return probe(client).is_success
            except httpx.TransportError:
                return False

        wait_until(answers, timeout=timeout)


# For a test of what the HTTP layer decides before any store is asked (a body's or a query's validation, the
# OpenAPI document, credentials that are malformed): it runs on the memory store alone. The stores themselves are
# the contract suite's (tests/contract), and every test of what they keep still runs on all three.
BEFORE_THE_STORE = pytest.mark.parametrize("client", ["memory"], indirect=True)
