"""What the sync and async clients share: the error, the retry rule, the settings, a request's parts, decoding, SSE
parsing; each client only sends (awaited or not)."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack
from urllib.parse import quote

import httpx
import msgspec

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_MAX_RETRY_WAIT = 60.0
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


class ApiError(Exception):
    """A non-2xx answer, read from the service's error envelope `{"error": {"code", "message", "details"}}`."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Any = None,
        request_id: str | None = None,
        retry_after: float | None = None,
        response: httpx.Response | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.request_id = request_id
        self.retry_after = retry_after
        self.response = response  # the answer itself (its headers, its body as sent)


def api_error(response: httpx.Response) -> ApiError:
    code, message, details = f"HTTP_{response.status_code}", response.reason_phrase, None
    try:
        error = msgspec.json.decode(response.content).get("error")
    except (msgspec.DecodeError, AttributeError):
        error = None
    if isinstance(error, dict):
        code = str(error.get("code", code))
        message = str(error.get("message", message))
        details = error.get("details")
    request_id = response.headers.get("x-request-id")
    return ApiError(response.status_code, code, message, details, request_id, retry_after(response), response)


def retry_after(response: httpx.Response) -> float | None:
    """`Retry-After` in seconds (delta-seconds or an HTTP date), None when absent or unreadable."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


@dataclass(frozen=True)
class RetryPolicy:
    """When an answer is tried again: a 429 always (the service refused it before doing anything, whatever the
    method), a 503 with `Retry-After` when the request is idempotent (its method, or an `Idempotency-Key`); at most
    `max_retries` times, each after `Retry-After` seconds, and never when that is more than `max_retry_wait`
    (the error is raised at once instead)."""

    max_retries: int = DEFAULT_MAX_RETRIES
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT

    def wait(self, response: httpx.Response, attempt: int, idempotent: bool) -> float | None:
        """Seconds to wait before trying again, or None to give the answer back."""
        if attempt >= self.max_retries:
            return None
        status = response.status_code
        if status != 429 and not (status == 503 and idempotent):
            return None
        seconds = retry_after(response)
        if seconds is None:
            if status == 503:
                return None
            seconds = min(2.0**attempt, self.max_retry_wait)
        return seconds if seconds <= self.max_retry_wait else None

    def after(self, response: httpx.Response, attempt: int, idempotent: bool) -> float:
        """Seconds to wait before trying again; the answer's `ApiError` when it is final."""
        wait = self.wait(response, attempt, idempotent)
        if wait is None:
            raise api_error(response)
        return wait


def timeouts(timeout: float | httpx.Timeout) -> tuple[httpx.Timeout, httpx.Timeout]:
    """The calls' timeouts, and the streams' (reads wait at least a minute: keep-alive comments come between)."""
    calls = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
    read = None if calls.read is None else max(calls.read, 60.0)
    return calls, httpx.Timeout(connect=calls.connect, read=read, write=calls.write, pool=calls.pool)


def path_segment(value: str, safe: str = "") -> str:
    return quote(str(value), safe=safe)


@dataclass
class Request:
    method: str
    url: str
    params: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes | None = None

    @property
    def idempotent(self) -> bool:
        return self.method in IDEMPOTENT or "Idempotency-Key" in self.headers

    def arguments(self, timeout: float | None = None) -> dict[str, Any]:
        """The keyword arguments of `request` on an `httpx.Client` or `httpx.AsyncClient`."""
        return {
            "method": self.method,
            "url": self.url,
            "params": self.params,
            "headers": self.headers,
            "content": self.content,
            "timeout": timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
        }


class RequestParts(TypedDict, total=False):
    """A request's parts besides its method and URL, as the generated operations pass them."""

    params: Mapping[str, Any] | None
    body: Any
    media: str | None
    idempotency_key: str | None


def build(
    method: str,
    url: str,
    params: Mapping[str, Any] | None,
    body: Any,
    media: str | None,
    idempotency_key: str | None,
) -> Request:
    request = Request(method, url, query(params))
    if idempotency_key is not None:
        request.headers["Idempotency-Key"] = idempotency_key
    if isinstance(body, bytes):
        request.content = body
        request.headers["Content-Type"] = media or "application/octet-stream"
    elif body is not None:
        request.content = msgspec.json.encode(body)
        request.headers["Content-Type"] = "application/json"
    return request


def query(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The query string's parameters: None left out, booleans as `true`/`false`, dates in ISO 8601."""
    out: dict[str, Any] = {}
    for name, value in (params or {}).items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, list | tuple):
            out[name] = [scalar(item) for item in value]
        else:
            out[name] = scalar(value)
    return out


def scalar(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


def decode(response: httpx.Response, result: Any) -> Any:
    if response.status_code == 204 or result is None or (not response.content and _optional(result)):
        return None
    if result is bytes:
        return response.content
    if result is str:
        return response.text
    choices = [arg for arg in getattr(result, "__args__", ()) if isinstance(arg, type) and arg is not type(None)]
    if len(choices) > 1:  # a union of Structs, untagged: the first (with the most fields) that reads the answer
        for choice in sorted(choices, key=lambda struct: -len(getattr(struct, "__struct_fields__", ()))):
            try:
                return msgspec.json.decode(response.content, type=choice)
            except msgspec.ValidationError:
                continue
    return msgspec.json.decode(response.content, type=result)


def _optional(result: Any) -> bool:
    return type(None) in getattr(result, "__args__", ())


class Call:
    """The settings both clients keep, and the one method the generated operations call: it builds the request and
    hands it to the client's `_exchange`, which sends it and decodes the answer (awaitable in `AsyncClient`)."""

    timeout: httpx.Timeout
    stream_timeout: httpx.Timeout
    retry: RetryPolicy

    def _configure(
        self,
        base_url: str,
        api_key: str | None,
        timeout: float | httpx.Timeout,
        retry: RetryPolicy,
        headers: Mapping[str, str] | None,
    ) -> dict[str, Any]:
        """Keep the timeouts and the retry policy; the keyword arguments of the client's `httpx` client."""
        self.timeout, self.stream_timeout = timeouts(timeout)
        self.retry = retry
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        return {"base_url": base_url.rstrip("/"), "headers": {**auth, **(headers or {})}, "timeout": self.timeout}

    def _call(self, method: str, url: str, result: Any, **parts: Unpack[RequestParts]) -> Any:
        """The operation's answer decoded as `result` (awaitable in `AsyncClient`)."""
        params, body, media = parts.get("params"), parts.get("body"), parts.get("media")
        return self._exchange(build(method, url, params, body, media, parts.get("idempotency_key")), result)

    def _exchange(self, request: Request, result: Any) -> Any:
        """Send the request and decode its answer as `result`: each client its own way."""
        raise NotImplementedError


@dataclass
class SseEvent:
    """One event of a `text/event-stream`, as its `id:`, `event:` and `data:` lines gave it."""

    id: str | None
    event: str
    data: str


class SseParser:
    """Feeds lines, returns the complete events (comments and `retry:` hints are skipped)."""

    def __init__(self) -> None:
        self._id: str | None = None
        self._event = "message"
        self._data: list[str] = []

    def feed(self, lines: Iterable[str]) -> list[SseEvent]:
        events: list[SseEvent] = []
        for line in lines:
            if not line:
                if self._data:
                    events.append(SseEvent(self._id, self._event, "\n".join(self._data)))
                self._id, self._event, self._data = None, "message", []
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "id":
                self._id = value
            elif name == "event":
                self._event = value
            elif name == "data":
                self._data.append(value)
        return events
