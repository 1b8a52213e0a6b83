"""What the task plans area needs from a store."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.paging import PageRequest
from controlplane_domain.task_plans.entity import PlanStatus, TaskPlan


class TaskPlanRepository(Protocol):
    async def add(self, plan: TaskPlan) -> None: ...

    async def get(self, organization_id: str, plan_id: str, *, for_update: bool = False) -> TaskPlan | None:
        """With `for_update`, the plan stays locked until the unit of work ends."""

    async def by_execution(
        self, organization_id: str, execution_id: str, *, for_update: bool = False
    ) -> TaskPlan | None:
        """The plan whose planning execution is `execution_id` (locked with `for_update`, as `get`)."""

    async def update(self, plan: TaskPlan) -> None: ...

    async def list_page(
        self, organization_id: str, page: PageRequest, *, status: PlanStatus | None
    ) -> tuple[list[TaskPlan], int]: ...

    async def newest_page(
        self, organization_id: str, page: PageRequest, statuses: frozenset[PlanStatus] | None
    ) -> tuple[list[TaskPlan], int]:
        """The organization's plans (whose status is in `statuses`, when given), most recent first ((created_at,
        id) descending), and their total."""
