"""`AsyncClient`: every operation awaited, retries on 429 (and 503 with `Retry-After`), the streams with resume."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, TypeVar

import httpx

from controlplane_client._core import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_TIMEOUT,
    RetryPolicy,
    SseEvent,
    SseParser,
    api_error,
    build,
    decode,
    path_segment,
    timeouts,
)
from controlplane_client._operations import AsyncOperations
from controlplane_client._streams import RunEvent, execution_ended, execution_event, run_ended, run_event
from controlplane_wire.executions import ExecutionEvent

E = TypeVar("E")


class AsyncClient(AsyncOperations):
    """The control plane's API over one `httpx.AsyncClient`. Results are the server's own wire Structs; a non-2xx
    answer raises `ApiError`. `sleep` and `transport` are for tests (a recorded wait, an `httpx.MockTransport`)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout, self.stream_timeout = timeouts(timeout)
        self.http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={**auth, **(headers or {})},
            timeout=self.timeout,
            transport=transport,
        )
        self.retry = RetryPolicy(max_retries, max_retry_wait)
        self._sleep = sleep

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        media: str | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - httpx's own per-request timeout
    ) -> httpx.Response:
        """One call, tried again as `RetryPolicy` says; the 2xx answer, else `ApiError`."""
        request = build(method, url, params, body, media, idempotency_key)
        attempt = 0
        while True:
            response = await self.http.request(
                request.method,
                request.url,
                params=request.params,
                headers=request.headers,
                content=request.content,
                timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
            )
            if response.is_success:
                return response
            wait = self.retry.wait(response, attempt, request.idempotent)
            if wait is None:
                raise api_error(response)
            attempt += 1
            await self._sleep(wait)

    async def _call(
        self,
        method: str,
        url: str,
        result: Any,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        media: str | None = None,
        idempotency_key: str | None = None,
    ) -> Any:
        response = await self.request(
            method, url, params=params, body=body, media=media, idempotency_key=idempotency_key
        )
        return decode(response, result)

    def stream_execution(self, execution_id: str, *, last_event_id: int | None = None) -> AsyncIterator[ExecutionEvent]:
        """The execution's events from the first (or after `last_event_id`) to its `done` event, resuming with
        `Last-Event-ID` after a dropped connection (`GET /api/v1/executions/{execution_id}/stream`)."""
        url = f"/api/v1/executions/{path_segment(execution_id)}/stream"
        return self._follow(url, last_event_id, execution_event, execution_ended, lambda event: event.seq)

    def stream_workflow_run(self, run_id: str, *, last_event_id: int | None = None) -> AsyncIterator[RunEvent]:
        """The run's and its steps' transitions to the run's end, resuming likewise
        (`GET /api/v1/workflow-runs/{run_id}/stream`)."""
        url = f"/api/v1/workflow-runs/{path_segment(run_id)}/stream"
        return self._follow(url, last_event_id, run_event, run_ended, lambda event: event.seq)

    async def _follow(
        self,
        url: str,
        last_id: int | None,
        read: Callable[[SseEvent], E],
        ended: Callable[[E], bool],
        seq: Callable[[E], int],
    ) -> AsyncIterator[E]:
        """Connect, yield, and on a dropped connection (or a stream that ended before its last event, as when a
        node stops) connect again after the last event seen. A connection that fails `max_retries` times in a row
        raises; a stream that ends cleanly with nothing new ends the iteration (the server had nothing more)."""
        failures = 0
        while True:
            headers = {"Accept": "text/event-stream"}
            if last_id is not None:
                headers["Last-Event-ID"] = str(last_id)
            fresh = False
            try:
                async with self.http.stream("GET", url, headers=headers, timeout=self.stream_timeout) as response:
                    if not response.is_success:
                        await response.aread()
                        wait = self.retry.wait(response, failures, True)
                        if wait is None:
                            raise api_error(response)
                        failures += 1
                        await self._sleep(wait)
                        continue
                    parser = SseParser()
                    async for line in response.aiter_lines():
                        for frame in parser.feed([line]):
                            event = read(frame)
                            last_id, fresh, failures = seq(event), True, 0
                            yield event
                            if ended(event):
                                return
            except httpx.TransportError:
                failures += 1
                if failures > self.retry.max_retries:
                    raise
                await self._sleep(min(0.5 * 2**failures, self.retry.max_retry_wait))
                continue
            if not fresh:
                return
