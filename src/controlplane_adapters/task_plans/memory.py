"""Task plans in the memory store."""

from __future__ import annotations

from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.paging import PageRequest
from controlplane_domain.task_plans.entity import PlanStatus, TaskPlan


class MemoryTaskPlanRepository(MemoryRepository[TaskPlan]):
    noun = "task plan"
    unique_field = "id"

    async def by_execution(
        self, organization_id: str, execution_id: str, *, for_update: bool = False
    ) -> TaskPlan | None:
        return next(
            (p for p in self.rows.values() if p.organization_id == organization_id and p.execution_id == execution_id),
            None,
        )

    async def list_page(  # type: ignore[override]
        self, organization_id: str, page: PageRequest, *, status: PlanStatus | None
    ) -> tuple[list[TaskPlan], int]:
        return self.page_where(organization_id, page, lambda plan: status in (None, plan.status))
