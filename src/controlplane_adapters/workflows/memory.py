"""Workflows in the memory store: the workflows, their runs and the runs' event logs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.errors import Conflict
from controlplane_domain.fairness import in_turns
from controlplane_domain.paging import PageRequest
from controlplane_domain.workflows.entity import RunEvent, RunStatus, Workflow, WorkflowRun


class MemoryWorkflowRepository(MemoryRepository[Workflow]):
    noun = "workflow"
    audited = Workflow.audited


class MemoryWorkflowRunRepository(MemoryRepository[WorkflowRun]):
    noun = "workflow run"
    unique_field = "id"

    def __init__(self, rows: dict[str, WorkflowRun], events: dict[str, tuple[RunEvent, ...]]) -> None:
        super().__init__(rows)
        self.events = events

    async def add(self, run: WorkflowRun, events: Sequence[RunEvent]) -> None:  # type: ignore[override]
        await super().add(run)
        self._append(events)

    async def update(self, run: WorkflowRun, events: Sequence[RunEvent]) -> None:  # type: ignore[override]
        await super().update(run)
        self._append(events)

    def _append(self, events: Sequence[RunEvent]) -> None:
        for event in events:
            log = self.events.get(event.run_id, ())
            if log and log[-1].seq >= event.seq:
                raise Conflict(f"event {event.seq} of workflow run {event.run_id} exists")
            self.events[event.run_id] = (*log, event)

    async def list_page(  # type: ignore[override]
        self, organization_id: str, page: PageRequest, *, workflow_id: str | None, status: RunStatus | None
    ) -> tuple[list[WorkflowRun], int]:
        return self.page_where(
            organization_id, page, lambda run: workflow_id in (None, run.workflow_id) and status in (None, run.status)
        )

    async def events_after(self, organization_id: str, run_id: str, after_seq: int, limit: int) -> list[RunEvent]:
        if await self.get(organization_id, run_id) is None:
            return []
        return [event for event in self.events.get(run_id, ()) if event.seq > after_seq][:limit]

    async def timeouts_due(self, now: datetime, limit: int, *, per_organization: int) -> list[WorkflowRun]:
        due = [run for run in self.rows.values() if run.timeout_check_at is not None and run.timeout_check_at <= now]
        return in_turns(due, lambda run: run.organization_id, lambda run: (run.timeout_check_at, run.id), limit=limit,
                        per_organization=per_organization)  # fmt: skip

    async def claim_timeout_check(self, run: WorkflowRun) -> bool:
        # one unit of work at a time: a second node's claim sees the first one's committed check
        current = self.rows.get(run.id)
        return current is not None and current.timeout_check_at == run.timeout_check_at
