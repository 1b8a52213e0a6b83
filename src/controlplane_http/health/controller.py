"""Health: service status, API version, and whether the database answers."""

from __future__ import annotations

from dataclasses import dataclass

from litestar import Controller, get
from litestar.di import NamedDependency

from controlplane_domain.errors import Unavailable
from controlplane_domain.ports import HealthProbe
from controlplane_http import API_VERSION
from controlplane_http.area import HttpArea
from controlplane_http.handlers import PrincipalDep, errors
from controlplane_wire.health import DatabaseHealth, Health


@dataclass(frozen=True, slots=True)
class Diagnostics:
    """What health reports on: the database probe and the backend's name."""

    probe: HealthProbe
    backend: str


class HealthController(Controller):
    path = "/api/health"
    tags = ["health"]

    @get("/", operation_id="health", responses=errors(503))
    async def health(self, diagnostics: NamedDependency[Diagnostics], principal: PrincipalDep) -> Health:
        """200 when the database answers; 503 (envelope, with the same facts in `details`) when it does not."""
        backend = diagnostics.backend
        if not await diagnostics.probe.database_ok():
            raise Unavailable(
                "the database does not answer",
                {
                    "status": "unavailable",
                    "version": API_VERSION,
                    "database": {"status": "unavailable", "backend": backend},
                },
            )
        return Health(status="healthy", version=API_VERSION, database=DatabaseHealth(status="ok", backend=backend))


AREA = HttpArea((HealthController,))
