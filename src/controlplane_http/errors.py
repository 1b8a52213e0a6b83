"""One mapping from every exception to the error envelope (and the 422 `detail` list)."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Sequence
from typing import Any

import msgspec
import msgspec.inspect as types
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
# msgspec's words for a value outside an enum, a Literal, or a tagged union's tags
_NOT_A_CHOICE = re.compile(r"^Invalid (?:enum )?value ")
_FIELDS = (types.StructType, types.TypedDictType, types.DataclassType)
_ITEMS = (types.ListType, types.SetType, types.FrozenSetType, types.VarTupleType)


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


def validation_response(
    items: list[tuple[list[str | int], str, str]], allowed: list[Any] | None = None
) -> Response[Any]:
    """422 with the spec's `detail` list and the envelope naming the first failing field (and, when its value is
    not one of a closed set, that set in `details.allowed`)."""
    (first_loc, first_msg, first_kind), *rest = items
    body = validation_body(first_loc, first_msg, *rest)
    body["detail"][0]["type"] = first_kind
    if allowed is not None:
        body["error"]["details"]["allowed"] = allowed
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


def allowed_values(kind: Any, path: Sequence[str | int]) -> list[Any] | None:
    """The values a value of type `kind` may hold at `path` (msgspec's error path, as JSON names and indexes), when
    they are a closed set: an Enum's, a Literal's, a tagged union's tags, or those an `extra_json_schema` enum
    narrows them to (what the OpenAPI document lists). None when the type there is no such set."""
    try:
        info = types.type_info(kind)
    except Exception:  # (not a type msgspec knows: nothing to add; a 422 stays a 422, whatever happens here)
        return None
    return _allowed(info, list(path))


def _allowed(info: types.Type, path: list[str | int]) -> list[Any] | None:
    narrowed: list[Any] | None = None
    while isinstance(info, types.Metadata):
        listed = (info.extra_json_schema or {}).get("enum")
        narrowed = list(listed) if isinstance(listed, list) else narrowed
        info = info.type
    if not path:
        if narrowed is not None:
            return narrowed
        if isinstance(info, types.EnumType):
            return [member.value for member in info.cls]
        if isinstance(info, types.LiteralType):
            return list(info.values)
        branches = info.types if isinstance(info, types.UnionType) else ()
        return next((found for branch in branches if (found := _allowed(branch, [])) is not None), None)
    step, rest = path[0], path[1:]
    if isinstance(info, types.UnionType):
        tagged = [branch for branch in info.types if isinstance(branch, types.StructType) and branch.tag_field]
        if tagged and not rest and all(branch.tag_field == step for branch in tagged):
            return [branch.tag for branch in tagged]
        return next((found for branch in info.types if (found := _allowed(branch, path)) is not None), None)
    if isinstance(info, types.StructType) and info.tag_field == step and not rest:
        return [info.tag]
    if isinstance(info, _FIELDS):
        field = next((field for field in info.fields if field.encode_name == step), None)
        return None if field is None else _allowed(field.type, rest)
    if isinstance(info, _ITEMS) and isinstance(step, int):
        return _allowed(info.item_type, rest)
    if isinstance(info, types.TupleType) and isinstance(step, int) and step < len(info.item_types):
        return _allowed(info.item_types[step], rest)
    if isinstance(info, types.DictType) and isinstance(step, str):
        return _allowed(info.value_type, rest)
    return None


def _quoted(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value)


def teaching(message: str, kind: Any, path: Sequence[str | int]) -> tuple[str, list[Any] | None]:
    """msgspec's message for a value outside a closed set, with the set named (`Invalid enum value 'x': expected
    one of 'a', 'b'`), and the set; other messages as they are."""
    if not _NOT_A_CHOICE.match(message) or kind is None:
        return message, None
    allowed = allowed_values(kind, path)
    if not allowed:
        return message, None
    return f"{message}: expected one of {', '.join(_quoted(value) for value in allowed)}", allowed


def _parameter_type(request: Request[Any, Any, Any], name: str) -> Any:
    """The annotation of the route's parameter `name` (`data`: its body), or None."""
    handler = request.scope.get("route_handler")
    field = None if handler is None else handler.parsed_fn_signature.parameters.get(name)
    return None if field is None else field.annotation


def _taught(
    request: Request[Any, Any, Any], items: list[tuple[list[str | int], str, str]]
) -> tuple[list[tuple[list[str | int], str, str]], list[Any] | None]:
    """The 422 items with each enum error's allowed values named: a body's (`["body", *path]`), resolved against
    the route's body type, or a query parameter's (`["query", name, *path]`) against its declared type; and the
    first item's values."""
    named: list[tuple[list[str | int], str, str]] = []
    first: list[Any] | None = None
    for index, (loc, message, kind) in enumerate(items):
        allowed = None
        if loc and loc[0] == "body":
            message, allowed = teaching(message, _parameter_type(request, "data"), loc[1:])
        elif len(loc) > 1 and loc[0] == "query":
            message, allowed = teaching(message, _parameter_type(request, str(loc[1])), loc[2:])
        if index == 0:
            first = allowed
        named.append((loc, message, kind))
    return named, first


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
        return validation_response(*_taught(request, [(loc, message, "value_error")]))
    if isinstance(exc, msgspec.DecodeError):
        return _json(400, envelope(400, "BAD_REQUEST", f"malformed JSON body: {exc}"))
    if isinstance(exc, ValidationException):
        return validation_response(*_taught(request, _litestar_validation(exc)))
    if isinstance(exc, HTTPException) and exc.status_code < 500:
        status = exc.status_code
        message = exc.detail if exc.detail else HTTP_CODES.get(status, "error").replace("_", " ").lower()
        return _json(status, envelope(status, HTTP_CODES.get(status, "HTTP_ERROR"), message), exc.headers)
    found = request.scope.get("state", {}).get("request_id")  # the request's id (operations/requests.py)
    request_id = found if isinstance(found, str) else str(uuid.uuid4())
    log.error("unhandled error on %s %s (request %s)", request.method, request.url.path, request_id, exc_info=exc)
    body = envelope(500, "INTERNAL_ERROR", "internal server error", {"request_id": request_id})
    return _json(500, body)  # (its X-Request-ID header is the outermost middleware's)
