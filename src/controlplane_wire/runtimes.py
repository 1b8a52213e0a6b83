"""Runtime registry wire types."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from controlplane_domain.runtimes import RUNTIME_IDS
from controlplane_wire.base import Page

# The registry's runtimes (documented as an enum; the use cases' check names the unsupported one).
RuntimeId = Annotated[
    str, Meta(description="a runtime of GET /api/v1/runtimes", extra_json_schema={"enum": list(RUNTIME_IDS)})
]


class RuntimeInfo(msgspec.Struct, kw_only=True):
    id: str
    name: str
    description: str
    supports_streaming: bool
    supports_tools: bool
    supports_mcp: bool
    supports_teams: bool
    supports_system_prompt: bool


class RuntimeList(Page[RuntimeInfo]):
    items: list[RuntimeInfo]
