"""The runtime registry (read-only)."""

from __future__ import annotations

from litestar import Controller, get

from controlplane_domain.runtimes import RUNTIMES
from controlplane_http.area import HttpArea
from controlplane_http.handlers import Limit, Offset, PrincipalDep, errors
from controlplane_wire.base import to_wire
from controlplane_wire.runtimes import RuntimeInfo, RuntimeList


class RuntimeController(Controller):
    path = "/api/v1/runtimes"
    tags = ["runtimes"]

    @get("/", operation_id="listRuntimes", responses=errors())
    async def list_runtimes(self, principal: PrincipalDep, limit: Limit = 50, offset: Offset = 0) -> RuntimeList:
        window = RUNTIMES[offset : offset + limit]
        items = [to_wire(runtime, RuntimeInfo) for runtime in window]
        return RuntimeList(items=items, total=len(RUNTIMES), limit=limit, offset=offset)


AREA = HttpArea((RuntimeController,))
