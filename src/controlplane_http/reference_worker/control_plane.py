"""The reference worker's calls to the control plane: a POST tried again until the service answers for good, the
single-try heartbeat, the last (offline) heartbeat, and what an answer means (worth another try, refused, stale)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from typing import Any

import httpx

from controlplane_http.reference_worker.config import WorkerConfig

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
        self.api = httpx.AsyncClient(
            base_url=config.api_url.rstrip("/"),
            headers={"Authorization": f"Bearer {config.api_key}"},
            timeout=httpx.Timeout(30.0, read=config.wait_seconds + 30.0),
        )

    async def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        """POST to the control plane until it answers for good: an unreachable server, a 429 and a 5xx are tried
        again after an exponential, jittered back-off (at least what Retry-After asks), so that a restart or an
        outage of the control plane costs the worker time, never its task. A 409 is returned (the caller knows
        what it means); any other 4xx is Refused. (A request whose answer was lost is sent again: event batches are
        delivered at least once.)"""
        delay = RETRY_FIRST_SECONDS
        while True:
            try:
                response = await self.api.post(path, json=body)
            except httpx.TransportError as exc:
                reason = repr(exc)
            else:
                if not _worth_retrying(response):
                    if response.status_code < 400 or response.status_code == 409:
                        return response
                    raise Refused(f"{path}: {response.status_code} {response.text[:500]}")
                reason = f"{response.status_code} {response.text[:200]}"
                delay = max(delay, _retry_after(response))
            wait = delay * random.uniform(0.5, 1.0)  # noqa: S311 - jitter, not crypto
            log.warning("control plane: %s failed (%s); trying again in %.1f s", path, reason, wait)
            await asyncio.sleep(wait)
            delay = min(delay * 2, RETRY_MAX_SECONDS)

    async def heartbeat(self, report: dict[str, Any]) -> dict[str, Any]:
        """One heartbeat, tried once (the worker's heartbeats say why); the control plane's answer."""
        response = await self.api.post("/api/v1/workers/heartbeat", json=report)
        if response.status_code >= 400 and not _worth_retrying(response):
            raise Refused(f"heartbeat: {response.status_code} {response.text[:500]}")
        response.raise_for_status()
        answer: dict[str, Any] = response.json()
        return answer

    async def offline(self, report: dict[str, Any]) -> None:
        """The last heartbeat: one short try, the worker is leaving."""
        with contextlib.suppress(httpx.HTTPError):
            await self.api.post("/api/v1/workers/heartbeat", json=report, timeout=OFFLINE_TIMEOUT_SECONDS)

    async def aclose(self) -> None:
        await self.api.aclose()


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
