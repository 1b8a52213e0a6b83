"""What executions work for, as the executions' port `ExecutionOwners` (`Ports.owners`): a workflow run's steps
(workflows/advance.py) and a task plan's planning (task_plans/outcome.py, task_plans/planning.py). The executions
do not import their owners (which build on them); this module, above both, joins them, and whoever builds `Ports`
wires `OWNERS`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from controlplane_domain.executions.entity import Execution, ExecutionEvent, PlanningTask, TargetType
from controlplane_domain.task_plans.outcome import record_planning_end
from controlplane_domain.task_plans.planning import planning_task
from controlplane_domain.workflows.advance import record_step_end

if TYPE_CHECKING:
    from controlplane_domain.ports import Ports, UnitOfWork


class DomainOwners:
    """The executions' owners: a planning execution's task plan, any other's workflow run."""

    async def ended(
        self, ports: Ports, uow: UnitOfWork, before: Execution, after: Execution, rows: Sequence[ExecutionEvent]
    ) -> tuple[bool, set[str]]:
        if after.target_type is TargetType.PLAN:
            return await record_planning_end(ports, uow, before, after, rows)
        return await record_step_end(ports, uow, before, after, rows)

    async def planning(self, uow: UnitOfWork, execution: Execution) -> PlanningTask | None:
        return await planning_task(uow, execution)


OWNERS = DomainOwners()
