"""The environments and their worker queues in the memory store (a queue's name is unique in its environment)."""

from __future__ import annotations

from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.environments.entity import Environment, WorkerQueue
from controlplane_domain.paging import PageRequest


class MemoryEnvironmentRepository(MemoryRepository[Environment]):
    noun = "environment"
    audited = Environment.audited

    async def get_by_name(self, organization_id: str, name: str) -> Environment | None:
        found = (e for e in self.rows.values() if e.organization_id == organization_id and e.name == name)
        return next(found, None)


class MemoryQueueRepository(MemoryRepository[WorkerQueue]):
    noun = "worker queue"
    audited = WorkerQueue.audited

    def same_scope(self, a: WorkerQueue, b: WorkerQueue) -> bool:
        return a.environment_id == b.environment_id

    async def list_page(
        self, organization_id: str, page: PageRequest, *, environment_id: str | None = None
    ) -> tuple[list[WorkerQueue], int]:
        return self.page_where(organization_id, page, lambda queue: environment_id in (None, queue.environment_id))
