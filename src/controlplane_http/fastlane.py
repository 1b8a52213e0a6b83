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
caller whose role falls short, a trailing slash, HEAD. Errors raised by the handler are answered by the app's
own exception handler (`errors.handle_exception`), so a 404 or a 422 reads the same whichever path served it.
Authentication and rate limits ran before (SecurityMiddleware wraps this lane). `tests/http/test_fast_lane.py`
sends the same requests with and without the lane and compares the answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import msgspec
from litestar import Litestar, MediaType, Request, Response
from litestar.routes import HTTPRoute
from litestar.serialization import encode_json
from litestar.types import Empty

from controlplane_domain.principal import Principal, Role
from controlplane_http.body import UNREADABLE_JSON, StrictJSONBody, has_nul
from controlplane_http.errors import handle_exception
from controlplane_http.middleware import ASGIApp, Message, Receive, Scope, Send
from controlplane_http.security import CASELESS_IDS, READ_METHODS

# The routes the lane serves, by operation id: the reads and the heartbeat, then the execution round trip.
HOT_OPERATIONS = (
    "getAgent", "listAgents", "workerHeartbeat",
    "executeAgent", "leaseExecution", "appendExecutionEvents", "completeExecution",
)  # fmt: skip

_JSON_HEADER = (b"content-type", b"application/json")
_JSON_TYPES = (None, MediaType.JSON, MediaType.JSON.value)


@dataclass(frozen=True, slots=True)
class _Bound:
    """An integer query parameter and the bounds its declaration gives it."""

    name: str
    ge: int | None
    le: int | None


@dataclass(frozen=True, slots=True)
class Lane:
    """One route of the lane: what to match, what the handler takes, what to answer."""

    method: str
    prefix: str  # the path up to its parameter, or the whole path
    suffix: str  # the path after its parameter ("" when the parameter ends it)
    parameter: str | None  # the name of the path's one `str` parameter
    caseless: bool  # the parameter is a server-made id, read in lowercase (security.CASELESS_IDS)
    call: Callable[..., Awaitable[Any]]
    role: Role
    status: int
    query: dict[str, _Bound]
    body: Any  # the JSON body's type, or None
    handler: Any  # Litestar's route handler: it turns a `Response` the handler returns into what is sent
    request: bool  # the handler takes the `request` (to watch for the client hanging up)


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
                    lane = _lane(route, method, handler)
                    if lane.parameter is not None:  # a static path is Litestar's first choice too
                        _refuse_overlaps(lane, route, litestar)
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
        if matched is None or not isinstance(principal, Principal) or not principal.can(matched[0].role):
            await self.app(scope, receive, send)
            return
        lane, value = matched
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


def _read_query(query: bytes, bounds: dict[str, _Bound], kwargs: dict[str, Any]) -> bool:
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


def _lane(route: HTTPRoute, method: str, handler: Any) -> Lane:
    """Describe one route for the lane, or refuse (at start) a handler the lane cannot call exactly."""
    name = handler.operation_id
    layers = handler.ownership_layers
    plain = (
        not handler.resolve_guards()
        and not set(handler.parsed_fn_signature.parameters) & set(handler.resolve_dependencies())
        and handler.resolve_before_request() is None
        and handler.resolve_after_response() is None
        and not any(getattr(layer, "after_request", None) for layer in layers)
        and not handler.resolve_response_headers()
        and not handler.resolve_response_cookies()
        and not handler.cache
        and handler.background is None
        and handler.resolve_return_dto() is None
        and not handler.has_sync_callable
        and handler.parsed_fn_signature.return_type.annotation not in (None, type(None))
        and 200 <= handler.status_code < 300
        and handler.status_code != 204
        and len(route.path_parameters) <= 1
        and all(parameter.type is str for parameter in route.path_parameters.values())
    )
    if not plain:
        raise ValueError(f"{name}: the fast lane serves plain JSON handlers only")
    parameter = next(iter(route.path_parameters), None)
    prefix, suffix = route.path, ""
    if parameter is not None:
        prefix, _, suffix = route.path_format.partition("{" + parameter + "}")
        if not prefix.endswith("/") or (suffix and not suffix.startswith("/")) or suffix.endswith("/"):
            raise ValueError(f"{name}: the fast lane takes a path parameter only as a whole segment")
    query: dict[str, _Bound] = {}
    body = None
    for argument, field in handler.parsed_fn_signature.parameters.items():
        if argument in ("scope", "request", parameter):
            continue
        if argument == "data":
            body = StrictJSONBody.body_type(handler)
            continue
        definition = field.kwarg_definition
        if field.annotation is not int or field.default is Empty or definition is None:
            raise ValueError(f"{name}: the fast lane cannot pass the parameter {argument!r}")
        query[argument] = _Bound(argument, definition.ge, definition.le)
    default = Role.VIEWER if method in READ_METHODS else Role.MEMBER
    return Lane(
        method=method,
        prefix=prefix,
        suffix=suffix,
        parameter=parameter,
        caseless=parameter in CASELESS_IDS,
        call=handler.fn,
        role=Role(handler.opt.get("role", default)),
        status=handler.status_code,
        query=query,
        body=body,
        handler=handler,
        request="request" in handler.parsed_fn_signature.parameters,
    )


def _segments(path_format: str) -> list[str | None]:
    """A route's path as segments, None for a parameter."""
    return [None if part.startswith("{") else part for part in path_format.strip("/").split("/")]


def _refuse_overlaps(lane: Lane, route: HTTPRoute, litestar: Litestar) -> None:
    """Refuse (at start) a lane whose paths another route could also match: Litestar's router would choose
    between them (static segments first), the lane would not. A static path equal to one of the lane's is
    handed on at request time instead (`static_paths`)."""
    mine = _segments(route.path_format)
    for other in litestar.routes:
        if other is route or not other.path_parameters:
            continue
        theirs = _segments(other.path_format)
        if len(theirs) == len(mine) and all(
            a is None or b is None or a == b for a, b in zip(mine, theirs, strict=True)
        ):
            raise ValueError(f"{lane.handler.operation_id}: the fast lane's path overlaps {other.path_format}")
