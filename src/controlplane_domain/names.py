"""Checks shared by the use cases."""

from __future__ import annotations

from controlplane_domain.rules import TextIsNotBlank, TextIsNotTooLong, check_rule

NAME_MAX_LENGTH = 255


def check_name(field: str, name: str) -> None:
    """A name is not blank and fits its column."""
    check_rule(TextIsNotBlank(field, name))
    check_rule(TextIsNotTooLong(field, name, NAME_MAX_LENGTH))
