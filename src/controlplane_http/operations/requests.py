"""The outermost middleware: every request gets its id (`X-Request-ID`, the client's own when valid) and is
counted for the metrics by method, route template and status, whoever answers it (Litestar, the fast lane, the
security middleware's 401 and 429, the exception handler's 500). Its one `send` wrapper adds the headers every
answer carries (`middleware.RESPONSE_HEADERS`: the request id, and the rate-limit headers the security middleware
adds to the list), so it must be the outermost middleware.

The request id is kept in one place: `scope["state"]["request_id"]` (`REQUEST_ID_KEY`; what other middleware and
handlers read, e.g. the audit log and the 500's body) and, for log lines, the context variable
`controlplane_adapters.operations.logs.REQUEST_ID`. Its cost on the hot paths is in docs/benchmarks.md.
"""

from __future__ import annotations

import itertools
import os
import re
from time import perf_counter
from typing import Any

from litestar import Litestar
from litestar.utils import normalize_path

from controlplane_adapters.operations.logs import REQUEST_ID
from controlplane_adapters.operations.request_counts import UNMATCHED, RequestStats
from controlplane_http.middleware import RESPONSE_HEADERS, ASGIApp, Message, Receive, Scope, Send

REQUEST_ID_KEY = "request_id"
REQUEST_ID_HEADER = b"x-request-id"
MAX_REQUEST_ID_LENGTH = 128
# What a client's id may hold: letters, digits and - _ . : ~ + = / @ (no space, quote or control character, so
# that it reads the same in a header, a log line and a JSON body)
_CLIENT_ID = re.compile(rb"[A-Za-z0-9\-_.:~+=/@]{1,%d}" % MAX_REQUEST_ID_LENGTH).fullmatch
_PREFIX = os.urandom(8).hex()
_COUNTER = itertools.count(1)


def new_request_id() -> str:
    """32 hex digits, unique: 16 random to the process, then its request count (cheaper than a uuid4)."""
    return f"{_PREFIX}{next(_COUNTER):016x}"


class Observed:
    """See the module's docstring. `stats` counts the requests (request_counts.STATS); `litestar` finds the route
    template of a request answered before routing (401, 429)."""

    def __init__(self, app: ASGIApp, litestar: Litestar, stats: RequestStats) -> None:
        self.app = app
        self.litestar = litestar
        self.stats = stats

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = perf_counter()
        request_id = None
        for name, value in scope["headers"]:
            if name == REQUEST_ID_HEADER:
                if _CLIENT_ID(value):
                    request_id = value.decode("ascii")
                break
        if request_id is None:
            request_id = new_request_id()
        scope["state"][REQUEST_ID_KEY] = request_id
        token = REQUEST_ID.set(request_id)
        headers = scope[RESPONSE_HEADERS] = [(REQUEST_ID_HEADER, request_id.encode("ascii"))]  # (others extend it)
        answered = False

        async def observed(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.start":
                answered = True
                status: int = message["status"]
                route = scope.get("path_template") or self._route(scope)
                self.stats.record(scope["method"], route, status, perf_counter() - started)
                message["headers"] = [*message.get("headers", ()), *headers]  # (every sender makes its own dict)
            await send(message)

        try:
            await self.app(scope, receive, observed)
        except BaseException:
            if not answered:  # the server answers 500 itself
                self.stats.record(scope["method"], scope.get("path_template") or UNMATCHED, 500, 0.0)
            raise
        finally:
            REQUEST_ID.reset(token)

    def _route(self, scope: Scope) -> str:
        """The template of the route the path names, for answers given before routing; `unmatched` for none."""
        try:
            found: Any = self.litestar.asgi_router.handle_routing(normalize_path(scope["path"]), scope["method"])
        except Exception:  # no such path, or not with this method
            return UNMATCHED
        return str(found[4])
