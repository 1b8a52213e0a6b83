"""Checks shared by the use cases."""

from __future__ import annotations

import re
import uuid

from controlplane_domain.rules import TextIsNotBlank, TextIsNotTooLong, check_rule

NAME_MAX_LENGTH = 255


def check_name(field: str, name: str) -> None:
    """A name is not blank and fits its column."""
    check_rule(TextIsNotBlank(field, name))
    check_rule(TextIsNotTooLong(field, name, NAME_MAX_LENGTH))


_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")


def is_uuid(value: str) -> bool:
    """Whether `uuid.UUID` reads `value` (the ids this service makes, in their canonical form, without building
    one: a regular expression costs a quarter of it)."""
    if _CANONICAL_UUID.match(value) is not None:
        return True
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
