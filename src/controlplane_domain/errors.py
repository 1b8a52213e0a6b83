"""Domain errors: each carries a stable code that the HTTP layer maps to a status."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class DomainError(Exception):
    """Base of every error the domain raises on purpose."""

    code = "DOMAIN_ERROR"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})


class NotFound(DomainError):
    """The object does not exist in the caller's organization."""

    code = "NOT_FOUND"

    def __init__(self, resource: str, object_id: str) -> None:
        super().__init__(f"{resource} '{object_id}' not found", {"resource": resource, "id": object_id})
        self.resource = resource
        self.object_id = object_id


def found(obj: T | None, resource: str, object_id: str) -> T:
    """The object read, or NotFound when there was none."""
    if obj is None:
        raise NotFound(resource, object_id)
    return obj


class Conflict(DomainError):
    """The change clashes with the current state (a duplicate name, a stale attempt)."""

    code = "CONFLICT"


def dotted_path(field: str) -> tuple[str | int, ...]:
    """The parts of a dotted field name: a part of ASCII digits only is a list index, anything else a key. (Not
    `str.isdigit`, which also holds for "²" or Arabic-Indic digits: such a key is a key, named as it was sent.)"""
    return tuple(int(part) if part.isascii() and part.isdigit() else part for part in field.split(".") if part)


class ValidationFailed(DomainError):
    """Input breaks a rule. `field` is where, in the request `location` (body, query, header): a dotted path
    ("steps.0.prompt": ASCII digits are indexes), or the parts themselves (keys and indexes) when a part is a key
    the caller chose, which may hold a dot or digits: `("configuration", key)`. `path` is then the parts, as the
    422's `loc` names them after the location, and `field` their dotted text."""

    code = "VALIDATION_ERROR"

    def __init__(self, field: str | Sequence[str | int], issue: str, location: str = "body") -> None:
        if isinstance(field, str):
            path = dotted_path(field) if location == "body" else ((field,) if field else ())
        else:
            path = tuple(field)
            field = ".".join(str(part) for part in path)
        super().__init__(f"{field}: {issue}" if field else issue, {"field": field, "issue": issue})
        self.field = field
        self.path = path
        self.issue = issue
        self.location = location


class TooLarge(DomainError):
    """What a request would build (a template's expanded body, a rendered prompt) passes a size bound: 413,
    naming the bound and its value; nothing is kept."""

    code = "PAYLOAD_TOO_LARGE"

    def __init__(self, what: str, bound: str, limit: int, unit: str = "bytes") -> None:
        super().__init__(
            f"{what} would exceed {bound} ({limit} {unit})", {"bound": bound, "limit": limit, "unit": unit}
        )
        self.bound = bound
        self.limit = limit


class Unauthenticated(DomainError):
    """Missing, malformed, unknown, expired or revoked credentials (always the same message)."""

    code = "UNAUTHORIZED"

    def __init__(self, message: str = "invalid or missing credentials") -> None:
        super().__init__(message)


class Forbidden(DomainError):
    """The caller may see the object but its role does not allow the action."""

    code = "FORBIDDEN"


class Unavailable(DomainError):
    """A dependency (the database) does not answer."""

    code = "SERVICE_UNAVAILABLE"


class StatementTimeout(Unavailable):
    """A database statement ran past its time limit and was stopped (503: the request asked for more work than
    one read may do; a narrower filter or a smaller page may pass)."""

    code = "STATEMENT_TIMEOUT"


class TransientFailure(DomainError):
    """A concurrent transaction got in the way (deadlock, serialization failure, busy database); a retry may pass."""

    code = "CONCURRENT_UPDATE"
