"""Deliveries over HTTP (httpx): the URL's host resolved, every address checked (addresses.py), the connection
made to the address checked (so that a DNS answer that changes between the check and the connection cannot send
it elsewhere: TLS still verifies the certificate against the host's name), no redirect followed (a 3xx is a
failure), one total deadline for the whole send (resolving, connecting, the request, the answer's headers and
body: a receiver that trickles its answer is cut off at it), the Standard Webhooks headers and signature (the
`standardwebhooks` package)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from standardwebhooks.webhooks import Webhook

from controlplane_adapters.jobs.trigger_signatures import StandardWebhooks
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.webhooks.addresses import Address, Target, parse_url, target_problem
from controlplane_domain.webhooks.ports import Outcome

if TYPE_CHECKING:
    import httpx

TIMEOUT_SECONDS = 10.0
"""A send's total deadline by default (CONTROLPLANE_WEBHOOKS_TIMEOUT_SECONDS)."""
MAX_TIMEOUT_SECONDS = 30.0
"""At most half the delivery's lease (entity.LEASE): a send always ends while its node holds the lease."""
RESPONSE_BYTES_READ = 64 * 1024
"""Of the receiver's answer, this much is read (and dropped) before the connection is closed."""
USER_AGENT = "agent-control-plane-webhooks/1"

MAX_POOLS = 256
"""Connection pools kept (one a host); past it, the least recently used idle ones are closed."""

Resolver = Callable[[str, int], Awaitable[list[Address]]]
"""A host's addresses (none when it does not resolve); `getaddrinfo` unless a test gives another."""


@dataclass(slots=True)
class _Pool:
    client: httpx.AsyncClient
    users: int = 0
    """Sends using it now (a pool in use is never closed)."""


def signed_headers(secret: str, message_id: str, timestamp: datetime, payload: str) -> dict[str, str]:
    """The Standard Webhooks headers of a delivery: `webhook-id`, `webhook-timestamp`, `webhook-signature`."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": Webhook(secret).sign(message_id, timestamp, payload),
    }


class HttpSender:
    """The domain's `WebhookSender`. `allow_private`: CONTROLPLANE_WEBHOOKS_ALLOW_PRIVATE (checked at save and at
    every send); `timeout_seconds`: each send's total deadline; `resolve`: the host's addresses (tests)."""

    def __init__(
        self, *, allow_private: bool = False, timeout_seconds: float = TIMEOUT_SECONDS, resolve: Resolver | None = None
    ) -> None:
        self.allow_private = allow_private
        self._timeout = min(timeout_seconds, MAX_TIMEOUT_SECONDS)
        self._pools: dict[str, _Pool] = {}
        self._retired: list[httpx.AsyncClient] = []
        self._secrets = StandardWebhooks()
        self._resolver = resolve or resolve_host

    def new_secret(self) -> str:
        return self._secrets.new_secret()

    def _http(self, host: str) -> _Pool:
        """The connection pool of the URL's host (its name, or its address when it names one). The URL sent names
        the address checked, which is what httpx pools by: one pool for every name would hand a connection made
        (and its TLS certificate verified) for one name to a request for another name at the same address."""
        pool = self._pools.pop(host, None)
        if pool is None:
            if len(self._pools) >= MAX_POOLS:  # forget the least recently used idle pools (closed at the next send)
                for name in [name for name, each in self._pools.items() if each.users == 0][: MAX_POOLS // 4 or 1]:
                    self._retired.append(self._pools.pop(name).client)
            # no proxy from the environment (it would connect); no cap on connections: the dispatcher's slots bound
            # the sends in flight, and a send waiting for a connection of the pool would spend its deadline there
            import httpx  # (loaded with the first delivery, not at start: docs/benchmarks.md, "Idle memory")

            limits = httpx.Limits(max_connections=None, max_keepalive_connections=4)
            pool = _Pool(httpx.AsyncClient(follow_redirects=False, timeout=self._timeout, trust_env=False,
                                           limits=limits))  # fmt: skip
        self._pools[host] = pool  # (the most recently used last)
        return pool

    async def _close_retired(self) -> None:
        retired, self._retired = self._retired, []
        for client in retired:
            await client.aclose()

    async def close(self) -> None:
        pools, self._pools = self._pools, {}
        self._retired.extend(pool.client for pool in pools.values())
        await self._close_retired()

    async def _resolve(self, target: Target) -> list[Address]:
        if target.literal is not None:
            return [target.literal]
        return await self._resolver(target.host, target.port)

    async def _target(self, url: str) -> tuple[Target | None, list[Address], str | None]:
        try:
            target = parse_url(url)
        except ValidationFailed as exc:
            return None, [], exc.issue
        addresses = await self._resolve(target)
        return target, addresses, target_problem(target, addresses, allow_private=self.allow_private)

    async def check(self, url: str) -> str | None:
        """At save: the URL's problem once its host is resolved (within the send's deadline)."""
        try:
            async with asyncio.timeout(self._timeout):
                return (await self._target(url))[2]
        except TimeoutError:
            return f"the host did not resolve within {self._timeout:g} s"

    async def send(self, url: str, message_id: str, timestamp: datetime, payload: str, secret: str) -> Outcome:
        started = time.monotonic()

        def elapsed() -> int:
            return int((time.monotonic() - started) * 1000)

        try:
            async with asyncio.timeout(self._timeout):
                return await self._send(url, message_id, timestamp, payload, secret, elapsed)
        except TimeoutError:
            return Outcome(None, elapsed(), f"timed out: the send's deadline ({self._timeout:g} s for resolving, "
                                            "connecting, the request and the whole answer) passed")  # fmt: skip

    async def _send(
        self, url: str, message_id: str, timestamp: datetime, payload: str, secret: str, elapsed: Callable[[], int]
    ) -> Outcome:
        import httpx  # (loaded by the first delivery's pool already)

        target, addresses, problem = await self._target(url)
        if problem is not None or target is None:
            return Outcome(None, elapsed(), f"refused: {problem}")
        headers = {**signed_headers(secret, message_id, timestamp, payload),
                   "content-type": "application/json", "user-agent": USER_AGENT}  # fmt: skip
        parts = urlsplit(url)
        address = addresses[0]
        pinned_host = f"[{address}]" if address.version == 6 else str(address)
        netloc = pinned_host if parts.port is None else f"{pinned_host}:{parts.port}"
        headers["host"] = parts.netloc
        extensions = {"sni_hostname": target.host} if target.scheme == "https" and target.literal is None else {}
        await self._close_retired()
        pool = self._http(target.host)
        client = pool.client
        request = client.build_request(
            "POST", urlunsplit(parts._replace(netloc=netloc)), content=payload.encode(), headers=headers,
            extensions=extensions,
        )  # fmt: skip
        pool.users += 1
        try:
            response = await client.send(request, stream=True)
            try:
                read = 0
                async for chunk in response.aiter_raw():  # the answer ends, or is cut short, within the deadline
                    read += len(chunk)
                    if read >= RESPONSE_BYTES_READ:
                        break
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            return Outcome(None, elapsed(), f"{type(exc).__name__}: {exc}"[:500] or type(exc).__name__)
        finally:
            pool.users -= 1
        code = response.status_code
        if 300 <= code < 400:
            return Outcome(code, elapsed(), f"the receiver answered {code} (redirects are not followed)")
        return Outcome(code, elapsed(), None if 200 <= code < 300 else f"the receiver answered {code}")


async def resolve_host(host: str, port: int) -> list[Address]:
    """`host`'s addresses by the system's resolver (`getaddrinfo`), each once, in its order."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    found: list[Address] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in found:
            found.append(address)
    return found
