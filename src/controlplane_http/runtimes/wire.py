"""Runtime registry wire types."""

from __future__ import annotations

import msgspec


class RuntimeInfo(msgspec.Struct, kw_only=True):
    id: str
    name: str
    description: str
    supports_streaming: bool
    supports_tools: bool
    supports_mcp: bool
    supports_teams: bool
    supports_system_prompt: bool


class RuntimeList(msgspec.Struct, kw_only=True):
    items: list[RuntimeInfo]
    total: int
    limit: int
    offset: int
