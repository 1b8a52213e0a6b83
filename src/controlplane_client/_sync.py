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
    RetryPolicy,
    SseEvent,
    SseParser,
    api_error,
    build,
    decode,
    path_segment,
    timeouts,
)
from controlplane_client._operations import Operations
from controlplane_client._streams import RunEvent, execution_ended, execution_event, run_ended, run_event
from controlplane_wire.executions import ExecutionEvent

E = TypeVar("E")


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
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout, self.stream_timeout = timeouts(timeout)
        self.http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={**auth, **(headers or {})},
            timeout=self.timeout,
            transport=transport,
        )
        self.retry = RetryPolicy(max_retries, max_retry_wait)
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
        request = build(method, url, params, body, media, idempotency_key)
        attempt = 0
        while True:
            response = self.http.request(
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
            self._sleep(wait)

    def _call(
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
        response = self.request(method, url, params=params, body=body, media=media, idempotency_key=idempotency_key)
        return decode(response, result)

    def stream_execution(self, execution_id: str, *, last_event_id: int | None = None) -> Iterator[ExecutionEvent]:
        """The execution's events to its `done` event, resuming with `Last-Event-ID` after a dropped connection
        (`GET /api/v1/executions/{execution_id}/stream`)."""
        url = f"/api/v1/executions/{path_segment(execution_id)}/stream"
        return self._follow(url, last_event_id, execution_event, execution_ended, lambda event: event.seq)

    def stream_workflow_run(self, run_id: str, *, last_event_id: int | None = None) -> Iterator[RunEvent]:
        """The run's and its steps' transitions to the run's end (`GET /api/v1/workflow-runs/{run_id}/stream`)."""
        url = f"/api/v1/workflow-runs/{path_segment(run_id)}/stream"
        return self._follow(url, last_event_id, run_event, run_ended, lambda event: event.seq)

    def _follow(
        self,
        url: str,
        last_id: int | None,
        read: Callable[[SseEvent], E],
        ended: Callable[[E], bool],
        seq: Callable[[E], int],
    ) -> Iterator[E]:
        """As `AsyncClient._follow`."""
        failures = 0
        while True:
            headers = {"Accept": "text/event-stream"}
            if last_id is not None:
                headers["Last-Event-ID"] = str(last_id)
            fresh = False
            try:
                with self.http.stream("GET", url, headers=headers, timeout=self.stream_timeout) as response:
                    if not response.is_success:
                        response.read()
                        wait = self.retry.wait(response, failures, True)
                        if wait is None:
                            raise api_error(response)
                        failures += 1
                        self._sleep(wait)
                        continue
                    parser = SseParser()
                    for line in response.iter_lines():
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
                self._sleep(min(0.5 * 2**failures, self.retry.max_retry_wait))
                continue
            if not fresh:
                return
