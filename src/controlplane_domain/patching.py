"""A sentinel for fields a partial update leaves alone."""

from __future__ import annotations

import enum
from typing import Final, TypeVar

T = TypeVar("T")


class _Unset(enum.Enum):
    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset.UNSET
Unset = _Unset


def pick(new: T | Unset, old: T) -> T:
    """The new value when one was given, the old one otherwise."""
    return old if new is UNSET else new
