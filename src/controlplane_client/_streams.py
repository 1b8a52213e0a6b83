"""The events the two streams carry, how each ends, and how either is followed across connections."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

import httpx
import msgspec

from controlplane_client._core import RetryPolicy, SseEvent, SseParser, path_segment
from controlplane_wire.executions import ExecutionEvent


class Sequenced(Protocol):
    @property
    def seq(self) -> int: ...


E = TypeVar("E", bound=Sequenced)


class RunEvent(msgspec.Struct, kw_only=True):
    """One event of a workflow run's stream: `run` (the run's status) or `step` (a step's)."""

    run_id: str
    seq: int
    type: str
    data: dict[str, Any]
    created_at: datetime


def execution_event(event: SseEvent) -> ExecutionEvent:
    return msgspec.json.decode(event.data, type=ExecutionEvent)


def execution_ended(event: ExecutionEvent) -> bool:
    """The stream ends after its `done` event."""
    return str(event.type) == "done"


def run_event(event: SseEvent) -> RunEvent:
    return msgspec.json.decode(event.data, type=RunEvent)


RUN_ENDED = frozenset({"succeeded", "failed", "cancelled"})


def run_ended(event: RunEvent) -> bool:
    return event.type == "run" and event.data.get("status") in RUN_ENDED


class Resume(Generic[E]):
    """A stream followed across connections, whatever sends: each connection resumes after the last event seen
    (`Last-Event-ID`); the stream is over after its last event, or when a connection ends cleanly with nothing new
    (the server had nothing more). A refused connection waits as `RetryPolicy` says; a dropped one is tried again
    `max_retries` times in a row at the most."""

    def __init__(
        self,
        url: str,
        last_id: int | None,
        read: Callable[[SseEvent], E],
        ended: Callable[[E], bool],
        retry: RetryPolicy,
    ) -> None:
        self.url = url
        self.last_id = last_id
        self.read = read
        self.ended = ended
        self.retry = retry
        self.failures = 0
        self.fresh = False
        self.finished = False
        self.parser = SseParser()

    def connect(self) -> dict[str, str]:
        """The headers of a new connection: it starts after the last event seen, with nothing new yet."""
        self.fresh, self.parser = False, SseParser()
        headers = {"Accept": "text/event-stream"}
        if self.last_id is not None:
            headers["Last-Event-ID"] = str(self.last_id)
        return headers

    def refused(self, response: httpx.Response) -> float:
        """Seconds to wait after a non-2xx answer (read in full), else its `ApiError`."""
        wait = self.retry.after(response, self.failures, True)
        self.failures += 1
        return wait

    def feed(self, line: str) -> list[E]:
        """The events the line completes, the stream's last one included (then it is `over`)."""
        events: list[E] = []
        for frame in self.parser.feed([line]):
            event = self.read(frame)
            self.last_id, self.fresh, self.failures = event.seq, True, 0
            events.append(event)
            if self.ended(event):
                self.finished = True
                break
        return events

    def closed(self) -> None:
        """The connection ended cleanly: the stream is over when it gave nothing new."""
        self.finished = self.finished or not self.fresh

    def over(self) -> bool:
        """After the stream's last event, or a connection that gave nothing new."""
        return self.finished

    def dropped(self, error: httpx.TransportError) -> float:
        """Seconds to wait after a dropped connection; the error itself after `max_retries` in a row."""
        self.failures += 1
        if self.failures > self.retry.max_retries:
            raise error
        return min(0.5 * 2.0**self.failures, self.retry.max_retry_wait)


def execution_stream(execution_id: str, last_event_id: int | None, retry: RetryPolicy) -> Resume[ExecutionEvent]:
    """`GET /api/v1/executions/{execution_id}/stream`, to the execution's `done` event."""
    url = f"/api/v1/executions/{path_segment(execution_id)}/stream"
    return Resume(url, last_event_id, execution_event, execution_ended, retry)


def workflow_run_stream(run_id: str, last_event_id: int | None, retry: RetryPolicy) -> Resume[RunEvent]:
    """`GET /api/v1/workflow-runs/{run_id}/stream`, to the run's end."""
    url = f"/api/v1/workflow-runs/{path_segment(run_id)}/stream"
    return Resume(url, last_event_id, run_event, run_ended, retry)
