"""One mapping from every exception to the error envelope (and the 422 `detail` list)."""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

import msgspec
from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException

from controlplane_domain.errors import (
    Conflict,
    DomainError,
    Forbidden,
    NotFound,
    TooLarge,
    TransientFailure,
    Unauthenticated,
    Unavailable,
    ValidationFailed,
)
from controlplane_domain.storage.entity import QuotaExceeded

log = logging.getLogger("controlplane.http")

DOMAIN_STATUS: dict[type[DomainError], int] = {
    ValidationFailed: 422,
    NotFound: 404,
    Conflict: 409,
    TransientFailure: 409,
    Unauthenticated: 401,
    Forbidden: 403,
    Unavailable: 503,
    QuotaExceeded: 413,
    TooLarge: 413,
}
HTTP_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    422: "VALIDATION_ERROR",
    429: "RATE_LIMITED",
    500: "INTERNAL_ERROR",
    503: "SERVICE_UNAVAILABLE",
}
_AT = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>\$[^`]*)`)?$", re.DOTALL)
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[\.\.\.\]")
_FIELD_IN_MSG = re.compile(r"(?:unknown|required) field `([^`]+)`")


def envelope(status: int, code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response[Any]:
    return Response(content=body, status_code=status, media_type=MediaType.JSON, headers=headers)


def validation_body(loc: list[str | int], message: str, *more: tuple[list[str | int], str, str]) -> dict[str, Any]:
    """The 422 body: the spec's `detail` list and the envelope naming the first failing field."""
    items = [(loc, message, "value_error"), *more]
    detail = [{"loc": item_loc, "msg": msg, "type": kind} for item_loc, msg, kind in items]
    field = ".".join(str(part) for part in loc[1:]) or str(loc[0])
    return {
        "detail": detail,
        **envelope(422, "VALIDATION_ERROR", f"{field}: {message}", {"field": field, "issue": message}),
    }


def validation_response(items: list[tuple[list[str | int], str, str]]) -> Response[Any]:
    """422 with the spec's `detail` list and the envelope naming the first failing field."""
    (first_loc, first_msg, first_kind), *rest = items
    body = validation_body(first_loc, first_msg, *rest)
    body["detail"][0]["type"] = first_kind
    return _json(422, body)


def _msgspec_loc(error: msgspec.ValidationError) -> tuple[list[str | int], str]:
    text = str(error)
    match = _AT.match(text)
    message = match.group("msg") if match else text
    loc: list[str | int] = ["body"]
    for name, index in _PATH_PART.findall((match.group("path") if match else None) or "$"):
        loc.append(int(index) if index else name if name else "...")
    if named := _FIELD_IN_MSG.search(message):
        loc.append(named.group(1))
    return loc, message


def _litestar_validation(exc: ValidationException) -> list[tuple[list[str | int], str, str]]:
    items: list[tuple[list[str | int], str, str]] = []
    for entry in exc.extra if isinstance(exc.extra, list) else []:
        if not isinstance(entry, dict):
            continue
        raw_source = entry.get("source") or "body"
        source = str(getattr(raw_source, "value", raw_source))
        key = str(entry.get("key") or "")
        message = str(entry.get("message") or "invalid value")
        if key == "data":
            items.append((["body"], "a JSON request body is required", "missing"))
            continue
        items.append(([source, *key.split(".")] if key else [source], message, "value_error"))
    return items or [(["request"], exc.detail or "invalid request", "value_error")]


def domain_error(exc: DomainError) -> tuple[int, dict[str, Any], dict[str, str] | None]:
    """Status, body and extra headers of the response to a domain error."""
    if isinstance(exc, ValidationFailed):
        loc: list[str | int] = [exc.location, *exc.path]
        body = validation_body(loc, exc.issue)
        body["error"]["details"].update((k, v) for k, v in exc.details.items() if k not in ("field", "issue"))
        return 422, body, None
    status = next((code for kind, code in DOMAIN_STATUS.items() if isinstance(exc, kind)), 400)
    headers = {"WWW-Authenticate": 'Bearer realm="controlplane"'} if status == 401 else None
    return status, envelope(status, exc.code, exc.message, exc.details), headers


def _domain_response(exc: DomainError) -> Response[Any]:
    status, body, headers = domain_error(exc)
    return _json(status, body, headers)


def handle_exception(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """The single exception handler of the app."""
    if isinstance(exc, DomainError):
        return _domain_response(exc)
    if isinstance(exc, msgspec.ValidationError):
        loc, message = _msgspec_loc(exc)
        return validation_response([(loc, message, "value_error")])
    if isinstance(exc, msgspec.DecodeError):
        return _json(400, envelope(400, "BAD_REQUEST", f"malformed JSON body: {exc}"))
    if isinstance(exc, ValidationException):
        return validation_response(_litestar_validation(exc))
    if isinstance(exc, HTTPException) and exc.status_code < 500:
        status = exc.status_code
        message = exc.detail if exc.detail else HTTP_CODES.get(status, "error").replace("_", " ").lower()
        return _json(status, envelope(status, HTTP_CODES.get(status, "HTTP_ERROR"), message), exc.headers)
    found = request.scope.get("state", {}).get("request_id")  # the request's id (operations/requests.py)
    request_id = found if isinstance(found, str) else str(uuid.uuid4())
    log.error("unhandled error on %s %s (request %s)", request.method, request.url.path, request_id, exc_info=exc)
    body = envelope(500, "INTERNAL_ERROR", "internal server error", {"request_id": request_id})
    return _json(500, body)  # (its X-Request-ID header is the outermost middleware's)
