"""Strict JSON request bodies: msgspec decodes the raw bytes once, with exact error paths and no coercion."""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
from litestar.dto import AbstractDTO, DTOFieldDefinition
from litestar.typing import FieldDefinition

from controlplane_domain.errors import ValidationFailed

if TYPE_CHECKING:
    from litestar.openapi.spec import Reference, Schema


# A Content-Type under which a body is read as JSON: `application/json`, or a structured syntax suffix
# (`application/merge-patch+json`, RFC 6838), whatever its parameters: the body is read as UTF-8 (RFC 8259).
_JSON_MEDIA_TYPE = re.compile(rb"application/(?:[a-z0-9!#$&^_.+-]+\+)?json")
_TAKES_BODY = "controlplane_takes_body"

# An escaped NUL that is not itself an escaped backslash followed by "u0000": no database stores it.
_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
_BODY_TYPE = "controlplane_body_type"


def has_nul(body: bytes) -> bool:
    """Whether a JSON text holds an escaped NUL character."""
    return b"\\u0000" in body and _NUL.search(body) is not None


# What msgspec raises, besides DecodeError, for bytes it cannot read as JSON: not UTF-8, or nested too deeply.
UNREADABLE_JSON = (UnicodeDecodeError, RecursionError)


def _unreadable(exc: UnicodeDecodeError | RecursionError) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid UTF-8 (byte {exc.start})"
    return "nested too deeply"


def foreign_media_type(scope: Any) -> str | None:
    """The request's Content-Type when its route reads a JSON body and that media type is not JSON (415); None
    otherwise. A request without a Content-Type (or with an empty one) is read as JSON, for `curl --data-binary`
    and hand-written clients."""
    handler = scope.get("route_handler")
    if handler is None:
        return None
    takes_body: bool | None = handler.opt.get(_TAKES_BODY)
    if takes_body is None:
        takes_body = handler.opt[_TAKES_BODY] = "data" in handler.parsed_fn_signature.parameters
    if not takes_body:
        return None
    for name, value in scope["headers"]:
        if name == b"content-type":
            media_type = value.split(b";", 1)[0].strip().lower()
            if not media_type or _JSON_MEDIA_TYPE.fullmatch(media_type):
                return None
            return str(value.decode("latin-1"))
    return None


class StrictJSONBody(AbstractDTO[Any]):
    """Decodes `data` with `msgspec.json.decode(..., strict=True)` into the handler's annotated Struct."""

    _types: ClassVar[dict[str, Any]] = {}

    @classmethod
    def create_for_field_definition(
        cls, field_definition: FieldDefinition, handler_id: str, backend_cls: type[Any] | None = None
    ) -> None:
        # (`backend_cls`: a Litestar DTO backend, whose class lives in a private module; this DTO uses none)
        if field_definition.name == "data":
            cls._types[handler_id] = field_definition.annotation

    @classmethod
    def is_supported_model_type_field(cls, field_definition: FieldDefinition) -> bool:
        return False

    @classmethod
    def body_type(cls, handler: Any) -> Any:
        """The handler's body type, kept in its `opt` (Litestar recomputes `handler_id` on every access)."""
        kind = handler.opt.get(_BODY_TYPE)
        if kind is None:
            kind = handler.opt[_BODY_TYPE] = cls._types[handler.handler_id]
        return kind

    def _kind(self) -> Any:
        return self.body_type(self.asgi_connection.route_handler)

    def decode_bytes(self, value: bytes) -> Any:
        kind = self._kind()
        if has_nul(value):
            raise ValidationFailed("", "text must not contain NUL (\\u0000) characters")
        try:
            return msgspec.json.decode(value, type=kind, strict=True)
        except UNREADABLE_JSON as exc:
            raise msgspec.DecodeError(f"JSON is malformed: {_unreadable(exc)}") from exc

    def decode_builtins(self, value: dict[str, Any]) -> Any:
        kind = self._kind()
        return msgspec.convert(value, kind, strict=True)

    @classmethod
    def generate_field_definitions(cls, model_type: type[Any]) -> Generator[DTOFieldDefinition, None, None]:
        yield from ()

    @classmethod
    def detect_nested_field(cls, field_definition: FieldDefinition) -> bool:
        return False

    @classmethod
    def create_openapi_schema(
        cls, field_definition: FieldDefinition, handler_id: str, schema_creator: Any
    ) -> Reference | Schema:
        schema: Reference | Schema = schema_creator.for_field_definition(
            FieldDefinition.from_annotation(cls._types[handler_id])
        )
        return schema
