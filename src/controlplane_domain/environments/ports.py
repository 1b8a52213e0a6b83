"""The environments' and worker queues' repository ports (a unit of work's `environments` and `queues`)."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.environments.entity import Environment, WorkerQueue
from controlplane_domain.paging import PageRequest


class EnvironmentRepository(Protocol):
    async def add(self, environment: Environment) -> None: ...

    async def get(
        self, organization_id: str, environment_id: str, *, for_update: bool = False
    ) -> Environment | None: ...

    async def get_by_name(self, organization_id: str, name: str) -> Environment | None:
        """The organization's environment of this name (names are unique in an organization)."""
        ...

    async def update(self, environment: Environment) -> None: ...

    async def delete(self, organization_id: str, environment_id: str) -> None: ...

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Environment], int]: ...


class QueueRepository(Protocol):
    async def add(self, queue: WorkerQueue) -> None: ...

    async def get(self, organization_id: str, queue_id: str, *, for_update: bool = False) -> WorkerQueue | None: ...

    async def update(self, queue: WorkerQueue) -> None: ...

    async def delete(self, organization_id: str, queue_id: str) -> None: ...

    async def list_page(
        self, organization_id: str, page: PageRequest, *, environment_id: str | None = None
    ) -> tuple[list[WorkerQueue], int]: ...
