"""Health wire types."""

from __future__ import annotations

import msgspec


class DatabaseHealth(msgspec.Struct, kw_only=True):
    status: str
    backend: str


class Health(msgspec.Struct, kw_only=True):
    status: str
    version: str
    database: DatabaseHealth
