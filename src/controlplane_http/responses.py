"""The app's response class: Litestar's Response, with a short path for the common JSON answer."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any, TypeVar

from litestar import Request, Response
from litestar.background_tasks import BackgroundTask, BackgroundTasks
from litestar.datastructures import Cookie
from litestar.enums import MediaType
from litestar.response.base import ASGIResponse
from litestar.serialization import get_serializer
from litestar.types import TypeEncodersMap

T = TypeVar("T")
_JSON = (None, MediaType.JSON, MediaType.JSON.value)


class JsonBody:
    """A complete JSON response as an ASGI app: two messages, no header objects."""

    __slots__ = ("body", "status")

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(self.body)).encode())]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


class FastResponse(Response[T]):
    """A handler's JSON answer without cookies, extra headers or background tasks goes out as a `JsonBody`.

    Litestar builds a header container and an ASGIResponse for every response; for the plain case that cost
    as much as the database lookup behind it. Anything else takes Litestar's own path."""

    def to_asgi_response(
        self,
        app: Any,
        request: Request[Any, Any, Any],
        *,
        background: BackgroundTask | BackgroundTasks | None = None,
        cookies: Iterable[Cookie] | None = None,
        encoded_headers: Iterable[tuple[bytes, bytes]] | None = None,
        headers: dict[str, str] | None = None,
        is_head_response: bool = False,
        media_type: MediaType | str | None = None,
        status_code: int | None = None,
        type_encoders: TypeEncodersMap | None = None,
    ) -> ASGIResponse:
        status = self.status_code or status_code or 200
        plain = (
            app is None
            and not headers
            and not self.headers
            and not cookies
            and not self.cookies
            and background is None
            and self.background is None
            and encoded_headers is None
            and not is_head_response
            and not type_encoders
            and not self.response_type_encoders
            and self.media_type in _JSON
            and media_type in _JSON
            and status >= 200
            and status not in (204, 304)
            and request.method != "HEAD"
        )
        if plain:
            body = self.render(self.content, MediaType.JSON.value, get_serializer(None))
            return JsonBody(status, body)  # type: ignore[return-value]  # any ASGI app will do
        return super().to_asgi_response(
            app,
            request,
            background=background,
            cookies=cookies,
            encoded_headers=encoded_headers,
            headers=headers,
            is_head_response=is_head_response,
            media_type=media_type,
            status_code=status_code,
            type_encoders=type_encoders,
        )
