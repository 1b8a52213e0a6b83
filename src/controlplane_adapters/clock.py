"""Clocks and id generators."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta


class SystemClock:
    """Wall-clock time in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to (for tests and simulations)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)


class UuidGenerator:
    """Random UUID4 ids as strings."""

    def new_id(self) -> str:
        return str(uuid.uuid4())
