"""Jobs in the memory store: the jobs and their runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Self

from controlplane_adapters.memory.base import MemoryRepository, sorted_page
from controlplane_domain.errors import Conflict
from controlplane_domain.executions.entity import Execution
from controlplane_domain.fairness import in_turns
from controlplane_domain.jobs.entity import FiringFilter, Job, JobRun
from controlplane_domain.paging import PageRequest, counted
from controlplane_domain.workflows.entity import WorkflowRun

if TYPE_CHECKING:
    from controlplane_adapters.memory.store import MemoryUnitOfWork


class MemoryJobRepository(MemoryRepository[Job]):
    noun = "job"
    audited = Job.audited

    @classmethod
    def on(cls, unit: MemoryUnitOfWork) -> Self:
        """The repository of a memory unit of work (`areas.py`)."""
        return cls(unit.table("jobs"), unit.table("job_runs"), unit.table("executions"), unit.table("workflow_runs"))

    def __init__(
        self,
        rows: dict[str, Job],
        runs: dict[str, JobRun],
        executions: dict[str, Execution] | None = None,
        workflow_runs: dict[str, WorkflowRun] | None = None,
    ) -> None:
        super().__init__(rows)
        self.runs = runs
        self.executions = executions if executions is not None else {}
        self.workflow_runs = workflow_runs if workflow_runs is not None else {}

    async def delete(self, organization_id: str, object_id: str) -> None:
        if await self.get(organization_id, object_id) is not None:
            await super().delete(organization_id, object_id)  # the row, and its audit event
            for run_id in [run.id for run in self.runs.values() if run.job_id == object_id]:
                del self.runs[run_id]

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Job]:
        sealed = (job for job in self.rows.values() if job.secret is not None and job.secret.key_id != key_id)
        return sorted(sealed, key=lambda job: job.id)[:limit]

    async def get_for_webhook(self, job_id: str) -> Job | None:
        return self.rows.get(job_id)

    async def due(self, now: datetime, limit: int, *, per_organization: int) -> list[Job]:
        due = [job for job in self.rows.values() if job.enabled and job.next_run_at is not None
               and job.next_run_at <= now]  # fmt: skip
        return in_turns(due, lambda job: job.organization_id, lambda job: (job.next_run_at, job.id), limit=limit,
                        per_organization=per_organization)  # fmt: skip

    async def claim(self, claims: Sequence[tuple[Job, datetime | None]]) -> list[Job]:
        claimed = []
        for job, next_run_at in claims:
            current = self.rows.get(job.id)
            if current is not None and current.enabled and current.next_run_at == job.next_run_at:
                self.rows[job.id] = replace(current, next_run_at=next_run_at)
                claimed.append(self.rows[job.id])
        return claimed

    def _mine(self, organization_id: str, job_id: str) -> list[JobRun]:
        return [run for run in self.runs.values() if run.organization_id == organization_id and run.job_id == job_id]

    async def add_run(self, *runs: JobRun) -> None:
        for run in runs:
            if run.job_id not in self.rows:
                raise Conflict("the job was deleted meanwhile")
            if run.webhook_id is not None and any(
                other.webhook_id == run.webhook_id for other in self._mine(run.organization_id, run.job_id)
            ):
                raise Conflict("the job already has a run for this webhook-id", {"field": "webhook-id"})
            self.runs[run.id] = run

    async def run_page(self, organization_id: str, job_id: str, page: PageRequest) -> tuple[list[JobRun], int]:
        return sorted_page(self._mine(organization_id, job_id), lambda run: (run.fired_at, run.id), page)

    async def run_for_webhook(self, organization_id: str, job_id: str, webhook_id: str) -> JobRun | None:
        return next((run for run in self._mine(organization_id, job_id) if run.webhook_id == webhook_id), None)

    async def last_fired_run(self, organization_id: str, job_id: str) -> JobRun | None:
        fired = [
            run
            for run in self._mine(organization_id, job_id)
            if run.execution_id is not None or run.workflow_run_id is not None
        ]
        return max(fired, key=lambda run: (run.fired_at, run.id), default=None)

    async def get_run(self, organization_id: str, run_id: str) -> JobRun | None:
        run = self.runs.get(run_id)
        return run if run is not None and run.organization_id == organization_id else None

    async def firings_page(
        self, organization_id: str, page: PageRequest, where: FiringFilter | None
    ) -> tuple[list[JobRun], int]:
        mine = [run for run in self.runs.values() if run.organization_id == organization_id]
        if where is not None:
            mine = [run for run in mine if self._kept(run, where)]
        ordered = sorted(mine, key=lambda run: (run.fired_at, run.id), reverse=True)
        return ordered[page.offset : page.offset + page.limit], counted(len(ordered), page)

    def _kept(self, run: JobRun, where: FiringFilter) -> bool:
        if run.status.value in where.firing:
            return True
        execution = self.executions.get(run.execution_id) if run.execution_id is not None else None
        if execution is not None and execution.status.value in where.executions:
            return True
        workflow_run = self.workflow_runs.get(run.workflow_run_id) if run.workflow_run_id is not None else None
        return workflow_run is not None and workflow_run.status.value in where.workflow_runs
