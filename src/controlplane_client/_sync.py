"""`Client`: the same as `AsyncClient`, blocking."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
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
from controlplane_client._operations import Operations
from controlplane_client._streams import Resume, RunEvent, Sequenced, execution_stream, workflow_run_stream
from controlplane_wire.executions import ExecutionEvent

E = TypeVar("E", bound=Sequenced)


class Client(Operations):
    """The control plane's API over one `httpx.Client` (see `AsyncClient`)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        options = self._configure(base_url, api_key, timeout, RetryPolicy(max_retries, max_retry_wait), headers)
        self.http = httpx.Client(**options, transport=transport)
        self._sleep = sleep

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        media: str | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        """One call, tried again as `RetryPolicy` says; the 2xx answer, else `ApiError`."""
        return self._send(build(method, url, params, body, media, idempotency_key), timeout)

    def _send(self, request: Request, timeout: float | None = None) -> httpx.Response:
        """Send, tried again as `RetryPolicy` says; the 2xx answer, else `ApiError`."""
        attempt = 0
        while True:
            response = self.http.request(**request.arguments(timeout))
            if response.is_success:
                return response
            self._sleep(self.retry.after(response, attempt, request.idempotent))
            attempt += 1

    def _exchange(self, request: Request, result: Any) -> Any:
        return decode(self._send(request), result)

    def stream_execution(self, execution_id: str, *, last_event_id: int | None = None) -> Iterator[ExecutionEvent]:
        """The execution's events to its `done` event, resuming with `Last-Event-ID` after a dropped connection
        (`GET /api/v1/executions/{execution_id}/stream`)."""
        return self._follow(execution_stream(execution_id, last_event_id, self.retry))

    def stream_workflow_run(self, run_id: str, *, last_event_id: int | None = None) -> Iterator[RunEvent]:
        """The run's and its steps' transitions to the run's end (`GET /api/v1/workflow-runs/{run_id}/stream`)."""
        return self._follow(workflow_run_stream(run_id, last_event_id, self.retry))

    def _follow(self, stream: Resume[E]) -> Iterator[E]:
        """As `AsyncClient._follow`."""
        while not stream.over():
            try:
                with self.http.stream(
                    "GET", stream.url, headers=stream.connect(), timeout=self.stream_timeout
                ) as response:
                    if not response.is_success:
                        response.read()
                        self._sleep(stream.refused(response))
                        continue
                    for line in response.iter_lines():
                        yield from stream.feed(line)
                        if stream.over():
                            return
                stream.closed()
            except httpx.TransportError as error:
                self._sleep(stream.dropped(error))
