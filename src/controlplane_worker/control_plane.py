"""The reference worker's calls to the control plane, through the typed client's request layer
(`controlplane_client.AsyncClient`: base URL, key, the error envelope): a POST tried again until the service
answers for good, the single-try heartbeat, the last (offline) heartbeat, and what an answer means (worth another
try, refused, stale). The client's own retries are off (`max_retries=0`): this loop retries without a bound, as a
worker outliving an outage of the control plane must. The answers the loop acts on are wire types
(`HeartbeatResponse`, `EventsAppended`, decoded strictly by msgspec); the lease's JSON stays a dict, which
the tasks read leniently (a lease the worker understands in part still runs, or fails with what was missing)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from typing import Any

import httpx
import msgspec

from controlplane_client import ApiError, AsyncClient
from controlplane_wire.executions import EventsAppended
from controlplane_wire.workers import HeartbeatResponse
from controlplane_worker.config import WorkerConfig

log = logging.getLogger("controlplane.worker")

RETRY_FIRST_SECONDS = 0.5
RETRY_MAX_SECONDS = 15.0
OFFLINE_TIMEOUT_SECONDS = 5.0  # the last heartbeat's time, at exit


class Stale(Exception):
    """The lease moved on (cancelled, expired, given to another worker): stop without completing."""


class Refused(Exception):
    """The control plane refused a request for good (a 4xx other than 409 and 429): the worker's configuration
    (key, queue) or the worker itself is wrong; retrying would not help."""


class ControlPlane:
    def __init__(self, config: WorkerConfig) -> None:
        self.client = AsyncClient(
            config.api_url,
            config.api_key,
            timeout=httpx.Timeout(30.0, read=config.wait_seconds + 30.0),
            max_retries=0,
        )

    @property
    def api(self) -> httpx.AsyncClient:
        """The client's HTTP connection pool (tests put a scripted transport here)."""
        return self.client.http

    @api.setter
    def api(self, http: httpx.AsyncClient) -> None:
        self.client.http = http

    async def _send(self, path: str, body: dict[str, Any], timeout: float | None = None) -> httpx.Response:  # noqa: ASYNC109
        """One POST: its answer, 2xx or not."""
        try:
            return await self.client.request("POST", path, body=body, timeout=timeout)
        except ApiError as error:
            if error.response is None:
                raise
            return error.response

    async def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        """POST to the control plane until it answers for good: an unreachable server, a 429 and a 5xx are tried
        again after an exponential, jittered back-off (at least what Retry-After asks), so that a restart or an
        outage of the control plane costs the worker time, never its task. A 409 is returned (the caller knows
        what it means); any other 4xx is Refused. (A request whose answer was lost is sent again: event batches are
        delivered at least once.)"""
        delay = RETRY_FIRST_SECONDS
        while True:
            try:
                response = await self._send(path, body)
            except httpx.TransportError as exc:
                reason = repr(exc)
            else:
                if not _worth_retrying(response):
                    if response.status_code < 400 or response.status_code == 409:
                        return response
                    raise refused(path, response)
                reason = f"{response.status_code} {response.text[:200]}"
                delay = max(delay, _retry_after(response))
            wait = delay * random.uniform(0.5, 1.0)  # noqa: S311 - jitter, not crypto
            log.warning("control plane: %s failed (%s); trying again in %.1f s", path, reason, wait)
            await asyncio.sleep(wait)
            delay = min(delay * 2, RETRY_MAX_SECONDS)

    async def heartbeat(self, report: dict[str, Any]) -> HeartbeatResponse:
        """One heartbeat, tried once (the worker's heartbeats say why); the control plane's answer (an answer that
        is not one raises: msgspec's DecodeError or ValidationError)."""
        response = await self._send("/api/v1/workers/heartbeat", report)
        if response.status_code >= 400 and not _worth_retrying(response):
            raise refused("heartbeat", response)
        response.raise_for_status()
        return heartbeat_answer(response)

    async def offline(self, report: dict[str, Any]) -> None:
        """The last heartbeat: one short try, the worker is leaving."""
        with contextlib.suppress(httpx.HTTPError):
            await self._send("/api/v1/workers/heartbeat", report, timeout=OFFLINE_TIMEOUT_SECONDS)

    async def aclose(self) -> None:
        await self.client.aclose()


FORBIDDEN_HINT = (
    "the worker needs a worker key (`controlplane api-keys create --role worker`, bound to this queue or its"
    " environment if bound at all) or the service key (SERVICE_API_KEY): other keys may not lease; a bound key's"
    " heartbeats name the environment of its queue (`--environment NAME`)"
)


def refused(what: str, response: httpx.Response) -> Refused:
    """The refusal of a request, with what to do about a 403 (the wrong kind of key)."""
    hint = f" ({FORBIDDEN_HINT})" if response.status_code == 403 else ""
    return Refused(f"{what}: {response.status_code} {response.text[:500]}{hint}")


def heartbeat_answer(response: httpx.Response) -> HeartbeatResponse:
    return msgspec.json.decode(response.content, type=HeartbeatResponse)


def events_answer(response: httpx.Response) -> EventsAppended:
    return msgspec.json.decode(response.content, type=EventsAppended)


def _worth_retrying(response: httpx.Response) -> bool:
    """An answer that a later try may change: a 429, a 5xx, or a 409 `CONCURRENT_UPDATE` (the server asking for
    one)."""
    status = response.status_code
    return status == 429 or status >= 500 or (status == 409 and _error_code(response) == "CONCURRENT_UPDATE")


def _error_code(response: httpx.Response) -> str | None:
    """The `error.code` of the service's error envelope, when the answer is one."""
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


def _retry_after(response: httpx.Response) -> float:
    try:
        return min(float(response.headers.get("retry-after", "0")), RETRY_MAX_SECONDS * 4)
    except ValueError:
        return 0.0
