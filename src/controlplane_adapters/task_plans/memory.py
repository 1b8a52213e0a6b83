"""Task plans in the memory store."""

from __future__ import annotations

from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.paging import PageRequest, counted
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

    async def newest_page(
        self, organization_id: str, page: PageRequest, statuses: frozenset[PlanStatus] | None
    ) -> tuple[list[TaskPlan], int]:
        mine = [plan for plan in self.rows.values() if plan.organization_id == organization_id
                and (statuses is None or plan.status in statuses)]  # fmt: skip
        ordered = sorted(mine, key=lambda plan: (plan.created_at, plan.id), reverse=True)
        return ordered[page.offset : page.offset + page.limit], counted(len(ordered), page)
