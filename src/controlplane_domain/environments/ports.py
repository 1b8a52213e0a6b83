"""The environments' and worker queues' repository ports (a unit of work's `environments` and `queues`)."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.environments.entity import Environment, WorkerQueue
from controlplane_domain.paging import PageRequest
from controlplane_domain.repository import Repository


class EnvironmentRepository(Repository[Environment], Protocol):
    async def get_by_name(self, organization_id: str, name: str) -> Environment | None:
        """The organization's environment of this name (names are unique in an organization)."""
        ...


class QueueRepository(Repository[WorkerQueue], Protocol):
    async def list_page(
        self, organization_id: str, page: PageRequest, *, environment_id: str | None = None
    ) -> tuple[list[WorkerQueue], int]: ...
