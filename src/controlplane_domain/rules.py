"""Business rules with names that read as sentences; a broken rule raises ValidationFailed."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from controlplane_domain.errors import ValidationFailed


class BusinessRule(Protocol):
    """A rule knows whether it is broken, where, and why."""

    @property
    def field(self) -> str: ...

    def is_broken(self) -> bool: ...

    def issue(self) -> str: ...


def check_rule(rule: BusinessRule) -> None:
    """Raise ValidationFailed when the rule is broken."""
    if rule.is_broken():
        raise ValidationFailed(rule.field, rule.issue())


@dataclass(frozen=True, slots=True)
class Bound:
    """Inclusive numeric bounds; None means open on that side."""

    ge: float | None = None
    le: float | None = None

    def admits(self, value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if self.ge is not None and value < self.ge:
            return False
        return not (self.le is not None and value > self.le)

    def describe(self) -> str:
        if self.ge is not None and self.le is not None:
            return f"must be between {_num(self.ge)} and {_num(self.le)}"
        if self.ge is not None:
            return f"must be greater than or equal to {_num(self.ge)}"
        if self.le is not None:
            return f"must be less than or equal to {_num(self.le)}"
        return "must be a finite number"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


@dataclass(frozen=True, slots=True)
class ValueIsWithinBounds:
    """A numeric setting lies inside its documented bounds."""

    field: str
    value: float | None
    bound: Bound

    def is_broken(self) -> bool:
        return self.value is not None and not self.bound.admits(self.value)

    def issue(self) -> str:
        return self.bound.describe()


@dataclass(frozen=True, slots=True)
class TextIsNotBlank:
    """A required text (a name) has at least one visible character."""

    field: str
    value: str

    def is_broken(self) -> bool:
        return not self.value.strip()

    def issue(self) -> str:
        return "must not be blank"


@dataclass(frozen=True, slots=True)
class TextIsNotTooLong:
    """A text fits its column."""

    field: str
    value: str | None
    max_length: int

    def is_broken(self) -> bool:
        return self.value is not None and len(self.value) > self.max_length

    def issue(self) -> str:
        return f"must be at most {self.max_length} characters"
