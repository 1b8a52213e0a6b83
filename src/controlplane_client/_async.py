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
    Request,
    RetryPolicy,
    build,
    decode,
)
from controlplane_client._operations import AsyncOperations
from controlplane_client._streams import Resume, RunEvent, Sequenced, execution_stream, workflow_run_stream
from controlplane_wire.executions import ExecutionEvent

E = TypeVar("E", bound=Sequenced)


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
        options = self._configure(base_url, api_key, timeout, RetryPolicy(max_retries, max_retry_wait), headers)
        self.http = httpx.AsyncClient(**options, transport=transport)
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
        return await self._send(build(method, url, params, body, media, idempotency_key), timeout)

    async def _send(self, request: Request, timeout: float | None = None) -> httpx.Response:  # noqa: ASYNC109
        """Send, tried again as `RetryPolicy` says; the 2xx answer, else `ApiError`."""
        attempt = 0
        while True:
            response = await self.http.request(**request.arguments(timeout))
            if response.is_success:
                return response
            await self._sleep(self.retry.after(response, attempt, request.idempotent))
            attempt += 1

    async def _exchange(self, request: Request, result: Any) -> Any:
        return decode(await self._send(request), result)

    def stream_execution(self, execution_id: str, *, last_event_id: int | None = None) -> AsyncIterator[ExecutionEvent]:
        """The execution's events from the first (or after `last_event_id`) to its `done` event, resuming with
        `Last-Event-ID` after a dropped connection (`GET /api/v1/executions/{execution_id}/stream`)."""
        return self._follow(execution_stream(execution_id, last_event_id, self.retry))

    def stream_workflow_run(self, run_id: str, *, last_event_id: int | None = None) -> AsyncIterator[RunEvent]:
        """The run's and its steps' transitions to the run's end, resuming likewise
        (`GET /api/v1/workflow-runs/{run_id}/stream`)."""
        return self._follow(workflow_run_stream(run_id, last_event_id, self.retry))

    async def _follow(self, stream: Resume[E]) -> AsyncIterator[E]:
        """Connect, yield, and connect again as `Resume` says (the stream's state and rules)."""
        while not stream.over():
            try:
                async with self.http.stream(
                    "GET", stream.url, headers=stream.connect(), timeout=self.stream_timeout
                ) as response:
                    if not response.is_success:
                        await response.aread()
                        await self._sleep(stream.refused(response))
                        continue
                    async for line in response.aiter_lines():
                        for event in stream.feed(line):
                            yield event
                        if stream.over():
                            return
                stream.closed()
            except httpx.TransportError as error:
                await self._sleep(stream.dropped(error))
