"""What every wire module shares: error bodies, base Structs (requests, pages, owned answers), field types, helpers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Generic, TypeVar, cast

import msgspec
from msgspec import Meta

T = TypeVar("T")
Item = TypeVar("Item")

# A character that `str.strip()` keeps (Python's white space, spelled for JSON Schema's regular expressions too):
# a text the domain refuses as blank has none. Stated in the document only (`extra_json_schema`), so that the
# domain's check keeps its message.
NOT_BLANK = "[^\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
NOT_BLANK_SCHEMA: dict[str, Any] = {"pattern": NOT_BLANK}
# An id the use case checks is a UUID (`is_uuid`; it reads every form `uuid.UUID` does, the canonical one among them).
UUID_SCHEMA: dict[str, Any] = {"format": "uuid"}

# A resource's name (an agent's, a skill's, a job's, ...): 1 to 255 characters, not blank.
Name = Annotated[str, Meta(min_length=1, max_length=255, extra_json_schema=NOT_BLANK_SCHEMA)]


def one_of(names: Iterable[str], listed_at: str) -> Meta:
    """A text's constraint: one of `names`, an enum in the document, which also says where the list is answered."""
    choices = list(names)
    return Meta(description=f"one of: {', '.join(choices)} ({listed_at})", extra_json_schema={"enum": choices})


class Request(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of request bodies: unknown fields are a validation error."""


class ErrorBody(msgspec.Struct, kw_only=True):
    code: str
    message: str
    details: dict[str, Any] = {}


class ErrorResponse(msgspec.Struct, kw_only=True):
    """The envelope of every non-2xx response."""

    error: ErrorBody


class ValidationError(msgspec.Struct, kw_only=True):
    loc: list[str | int]
    msg: str
    type: str


class HTTPValidationError(msgspec.Struct, kw_only=True):
    """422: the spec's `detail` list and the envelope, together."""

    detail: list[ValidationError]
    error: ErrorBody


def to_wire(value: Any, kind: type[T], **computed: Any) -> T:
    """Build a wire Struct from a domain object (attributes, nested dataclasses, enums); `computed` gives the fields
    the object does not have (or replaces those it has)."""
    if computed:
        names = [field.name for field in msgspec.structs.fields(cast("type[msgspec.Struct]", kind))]
        value = {name: computed[name] if name in computed else getattr(value, name) for name in names
                 if name in computed or hasattr(value, name)}  # fmt: skip
    return msgspec.convert(value, kind, from_attributes=True)


def to_domain(value: Any, kind: type[T]) -> T:
    """Build a domain object from a decoded wire Struct."""
    return msgspec.convert(msgspec.to_builtins(value), kind)


class OrganizationResource(msgspec.Struct, kw_only=True):
    """A stored object of one organization: its id, then its organization's (the first fields of its answers)."""

    id: str
    organization_id: str


class Page(msgspec.Struct, Generic[Item], kw_only=True):
    """A list operation's answer: a page of `items` out of `total`, from `offset`, at most `limit`. A page restates
    `items` with its own type (it keeps its place, first): the OpenAPI document reads a Struct's own annotations."""

    items: list[Item]
    total: int
    limit: int
    offset: int
