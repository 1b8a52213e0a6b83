"""The fast lane: the hottest routes served without Litestar's per-request machinery, by the same handlers.

Litestar spends, on every request, more than a point query costs: it routes through its trie, builds a
`Request`, resolves the handler's kwargs through a kwargs model and a signature model (msgspec), runs the
route's middleware stack and turns the answer into a `Response` before sending it. For a few routes that
carry most of the traffic (an agent by id, a page of agents, a worker heartbeat) this lane matches the path
itself and calls the very same handler function that Litestar would call (`route_handler.fn`), with the same
arguments, and sends its answer as Litestar would (status, `content-type`, `content-length`, the body encoded
by Litestar's own serializer).

It serves only the plain case and hands everything else, untouched, to Litestar: a query parameter it does
not know or cannot read exactly, a body that is not plain JSON of the route's type, an `Idempotency-Key`, a
caller who may not call the route (its role short of the route's, a worker key off the worker protocol, a lease
by a key that is neither a worker's nor the service's: each route's frozenset of the roles that may call it, built
at start), a trailing slash, HEAD. Errors raised by the handler are answered by the app's own exception handler
(`errors.handle_exception`), so a 404 or a 422 reads the same whichever path served it.
Authentication and rate limits ran before (SecurityMiddleware wraps this lane). `tests/http/test_fast_lane.py`
sends the same requests with and without the lane and compares the answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from litestar import Litestar, MediaType, Request, Response
from litestar.routes import HTTPRoute
from litestar.serialization import encode_json

from controlplane_domain.policies.entity import Denial, PolicyDenied
from controlplane_domain.policies.gate import hold_denial
from controlplane_domain.ports import Ports
from controlplane_domain.principal import Principal
from controlplane_http.audit.context import audit_context
from controlplane_http.body import UNREADABLE_JSON, has_nul
from controlplane_http.errors import handle_exception
from controlplane_http.fastlane.routes import Bound, Lane, describe, refuse_overlaps
from controlplane_http.middleware import ASGIApp, Message, Receive, Scope, Send

_JSON_HEADER = (b"content-type", b"application/json")
_JSON_TYPES = (None, MediaType.JSON, MediaType.JSON.value)


def audit_denial(scope: Scope, denial: Denial) -> None:
    """The audit event of a policy's refusal of a request this lane served (Litestar's path records its own in the
    gate, under the request's audit context; the lane sets none, to stay cheap on the allowed path)."""
    ports: Ports = scope["app"].state["ports"]
    principal = scope.get("user")
    if ports.policies is not None and isinstance(principal, Principal):
        hold_denial(ports.policies, denial, audit_context(scope, principal, ports))


class FastLane:
    """ASGI middleware in front of Litestar's router; see the module's docstring."""

    def __init__(self, app: ASGIApp, litestar: Litestar, operations: Iterable[str], max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.litestar = litestar
        self.exact: dict[tuple[str, str], Lane] = {}
        self.prefixed: dict[tuple[str, str], Lane] = {}  # the parameter ends the path
        self.inner: dict[str, list[Lane]] = {}  # the parameter is followed by more of the path, by method
        self.static_paths: set[str] = set()
        wanted = set(operations)
        for route in litestar.routes:
            if not route.path_parameters:
                self.static_paths.add(route.path)
            if not isinstance(route, HTTPRoute):
                continue
            for method, (handler, _) in route.route_handler_map.items():
                if handler.operation_id in wanted:
                    wanted.discard(str(handler.operation_id))
                    lane = describe(route, method, handler)
                    if lane.parameter is not None:  # a static path is Litestar's first choice too
                        refuse_overlaps(lane, route, litestar)
                    if lane.parameter is None:
                        self.exact[(method, lane.prefix)] = lane
                    elif not lane.suffix:
                        self.prefixed[(method, lane.prefix)] = lane
                    else:
                        self.inner.setdefault(method, []).append(lane)
        if wanted:
            raise ValueError(f"no such operations for the fast lane: {sorted(wanted)}")

    def _match(self, scope: Scope) -> tuple[Lane, str | None] | None:
        method: str = scope["method"]
        path: str = scope["path"]
        lane = self.exact.get((method, path))
        if lane is not None:
            return lane, None
        if path in self.static_paths:
            return None
        prefix, slash, value = path.rpartition("/")
        if not slash or not value:
            return None
        lane = self.prefixed.get((method, prefix + "/"))
        if lane is not None:
            return lane, value
        for lane in self.inner.get(method, ()):
            if path.startswith(lane.prefix) and path.endswith(lane.suffix):
                value = path[len(lane.prefix) : len(path) - len(lane.suffix)]
                if value and "/" not in value:
                    return lane, value
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        matched = self._match(scope) if scope["type"] == "http" and not scope.get("root_path") else None
        principal = scope.get("user")
        if matched is None or not isinstance(principal, Principal):
            await self.app(scope, receive, send)
            return
        lane, value = matched
        if principal.role not in lane.roles and not (lane.workers_only and principal.may_lease):
            await self.app(scope, receive, send)  # Litestar's path answers the 403 (or 404: security.require_role)
            return
        scope["path_template"] = lane.template  # as Litestar's router does (the metrics read it)
        kwargs: dict[str, Any] = {"scope": scope}
        if value is not None:
            kwargs[lane.parameter or ""] = value.lower() if lane.caseless else value
        if lane.request:
            kwargs["request"] = lane.handler.resolve_request_class()(scope, receive, send)
        if scope.get("query_string") and not _read_query(scope["query_string"], lane.query, kwargs):
            await self.app(scope, receive, send)
            return
        if lane.body is not None:
            read = await self._read_body(scope, receive, lane.body)
            if isinstance(read, _Fallback):
                await self.app(scope, read.receive, send)
                return
            kwargs["data"] = read
        try:
            answer = await lane.call(**kwargs)
            status = lane.status
            if isinstance(answer, Response):
                if not _plain_json(answer):  # no body, headers of its own, a stream: made into ASGI as Litestar does
                    request = kwargs.get("request") or lane.handler.resolve_request_class()(scope, receive, send)
                    response = await lane.handler.to_response(self.litestar, answer, request)
                    await response(scope, receive, send)
                    return
                status = answer.status_code or status
                answer = answer.content
            body = encode_json(answer)
        except Exception as exc:  # answered by the app's exception handler, as on Litestar's path
            if isinstance(exc, PolicyDenied) and exc.denial is not None:
                audit_denial(scope, exc.denial)
            request = Request(scope, receive, send)  # type: ignore[arg-type]
            error = handle_exception(request, exc)
            await error.to_asgi_response(None, request)(scope, receive, send)  # type: ignore[arg-type]
            return
        headers = [_JSON_HEADER, (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _read_body(self, scope: Scope, receive: Receive, kind: Any) -> Any:
        """The decoded body, or a `_Fallback` (with what was read put back) for Litestar to answer."""
        content_type = length = None
        for name, raw in scope["headers"]:
            if name == b"content-type":
                content_type = raw
            elif name == b"content-length":
                length = raw
            elif name == b"idempotency-key":
                return _Fallback(receive, [])
        if content_type is None or content_type.split(b";")[0].strip().lower() != b"application/json":
            return _Fallback(receive, [])
        if length is None or not length.isdigit() or int(length) > self.max_body_bytes:
            return _Fallback(receive, [])
        messages: list[Message] = []
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return _Fallback(receive, messages)
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            if size > self.max_body_bytes:
                return _Fallback(receive, messages)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if not body or has_nul(body):
            return _Fallback(receive, messages)
        try:
            return msgspec.json.decode(body, type=kind, strict=True)
        except (msgspec.ValidationError, msgspec.DecodeError, *UNREADABLE_JSON):
            return _Fallback(receive, messages)  # Litestar's path answers it (a 400 or a 422 in the envelope)


def _plain_json(answer: Response[Any]) -> bool:
    """A `Response` that Litestar would send as its content encoded as JSON, with a status of its own and no more
    (its `to_response` for such an answer costs more than the answer: a Request, headers and an ASGIResponse)."""
    return (
        type(answer) is Response
        and answer.content is not None
        and answer.status_code not in (204, 304)
        and answer.media_type in _JSON_TYPES
        and not answer.headers
        and not answer.cookies
        and answer.background is None
        and not answer.response_type_encoders
    )


class _Fallback:
    """A `receive` that hands back the messages already read, then the rest."""

    __slots__ = ("_messages", "_receive")

    def __init__(self, receive: Receive, messages: list[Message]) -> None:
        self._receive = receive
        self._messages = messages

    async def receive(self) -> Message:
        if self._messages:
            return self._messages.pop(0)
        return await self._receive()


def _read_query(query: bytes, bounds: dict[str, Bound], kwargs: dict[str, Any]) -> bool:
    """Read `name=digits` pairs of declared integer parameters into kwargs; False for anything else (Litestar
    then answers it, whether with a page or a 422)."""
    for pair in query.split(b"&"):
        raw_name, equals, raw_value = pair.partition(b"=")
        name = raw_name.decode("latin-1")
        bound = bounds.get(name)
        if bound is None or not equals or not raw_value.isdigit() or len(raw_value) > 9 or name in kwargs:
            return False
        if raw_value[0] == 48 and len(raw_value) > 1:  # a leading zero: Litestar refuses it (422)
            return False
        value = int(raw_value)
        if (bound.ge is not None and value < bound.ge) or (bound.le is not None and value > bound.le):
            return False
        kwargs[name] = value
    return True
