"""Background workflows: list, read and cancel every long-running run of an organization (workflow runs, job
firings and task plans' planning), composing the workflows', jobs' and task plans' repositories; each area's own
use case cancels its runs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from controlplane_domain.background.entity import (
    BackgroundRun,
    BackgroundStatus,
    BackgroundType,
    firing_filter,
    of_job_run,
    of_task_plan,
    of_workflow_run,
    plan_statuses,
    workflow_statuses,
)
from controlplane_domain.errors import Conflict, found
from controlplane_domain.executions import completion
from controlplane_domain.jobs.entity import JobRun
from controlplane_domain.paging import MAX_LIMIT, Page, PageRequest
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.task_plans import usecases as task_plans
from controlplane_domain.workflows import runs as workflow_runs

NOUN = "temporal workflow"


@dataclass(frozen=True, slots=True, kw_only=True)
class BackgroundFilter:
    type: BackgroundType | None = None
    status: BackgroundStatus | None = None


async def _job_run(uow: UnitOfWork, run: JobRun) -> BackgroundRun:
    org = run.organization_id
    execution = await uow.executions.get(org, run.execution_id) if run.execution_id is not None else None
    started = await uow.workflow_runs.get(org, run.workflow_run_id) if run.workflow_run_id is not None else None
    return of_job_run(run, execution, started)


async def _find(uow: UnitOfWork, organization_id: str, run_id: str) -> BackgroundRun:
    workflow_run = await uow.workflow_runs.get(organization_id, run_id)
    if workflow_run is not None:
        return of_workflow_run(workflow_run)
    job_run = await uow.jobs.get_run(organization_id, run_id)
    if job_run is not None:
        return await _job_run(uow, job_run)
    return of_task_plan(found(await uow.task_plans.get(organization_id, run_id), NOUN, run_id))


async def get_background_run(ports: Ports, organization_id: str, run_id: str) -> BackgroundRun:
    async with ports.read() as uow:
        return await _find(uow, organization_id, run_id)


Chunk = Callable[[PageRequest], Awaitable[tuple[list[BackgroundRun], int]]]


async def _stream(read: Chunk, first: list[BackgroundRun], total: int) -> AsyncIterator[BackgroundRun]:
    """Every item of one kind, newest first, read MAX_LIMIT at a time after the `first` chunk."""
    chunk, offset = first, 0
    while chunk:
        for item in chunk:
            yield item
        offset += len(chunk)
        if offset >= total or len(chunk) < MAX_LIMIT:
            return
        chunk, _ = await read(PageRequest(limit=MAX_LIMIT, offset=offset))


async def list_background_runs(
    ports: Ports, organization_id: str, page: PageRequest, where: BackgroundFilter
) -> Page[BackgroundRun]:
    """Every kind merged newest first ((started_at, id) descending). Each kind is read newest first from its own
    table; a page at `offset` reads the `offset + limit` newest of each kind (deep pages cost more: filter)."""
    async with ports.read() as uow:

        async def workflow_chunk(window: PageRequest) -> tuple[list[BackgroundRun], int]:
            statuses = None if where.status is None else workflow_statuses(where.status)
            items, total = await uow.workflow_runs.newest_page(organization_id, window, statuses)
            return [of_workflow_run(run) for run in items], total

        async def job_chunk(window: PageRequest) -> tuple[list[BackgroundRun], int]:
            firing = None if where.status is None else firing_filter(where.status)
            items, total = await uow.jobs.firings_page(organization_id, window, firing)
            return [await _job_run(uow, run) for run in items], total

        async def plan_chunk(window: PageRequest) -> tuple[list[BackgroundRun], int]:
            statuses = None if where.status is None else plan_statuses(where.status)
            items, total = await uow.task_plans.newest_page(organization_id, window, statuses)
            return [of_task_plan(plan) for plan in items], total

        kinds = {
            BackgroundType.WORKFLOW_RUN: workflow_chunk,
            BackgroundType.JOB_RUN: job_chunk,
            BackgroundType.TASK_PLAN: plan_chunk,
        }
        streams, total = [], 0
        for kind, read in kinds.items():
            if where.type not in (None, kind):
                continue
            first, count = await read(PageRequest(limit=min(MAX_LIMIT, page.offset + page.limit)))
            total += count
            streams.append(_stream(read, first, count))
        items = await _merged_window(streams, page)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


async def _merged_window(streams: list[AsyncIterator[BackgroundRun]], page: PageRequest) -> list[BackgroundRun]:
    """Items `offset` to `offset + limit` of the streams merged newest first."""
    heads: list[BackgroundRun | None] = [await anext(stream, None) for stream in streams]
    window: list[BackgroundRun] = []
    position = 0
    while len(window) < page.limit:
        live = [index for index, head in enumerate(heads) if head is not None]
        if not live:
            break
        index = max(live, key=lambda i: _order(heads[i]))
        if position >= page.offset:
            window.append(heads[index])  # type: ignore[arg-type]
        position += 1
        heads[index] = await anext(streams[index], None)
    return window


def _order(item: BackgroundRun | None) -> tuple[datetime, str]:
    assert item is not None
    return item.started_at, item.id


async def cancel_background_run(ports: Ports, organization_id: str, run_id: str) -> BackgroundRun:
    """A workflow run: cancelled (the workflows' cancel). A job's firing: what it started is cancelled (its
    workflow run, or its execution: at once when no worker holds it, else its worker is asked to stop). A task plan
    still planning: cancelled with its planning execution. 409 when it already finished (a skipped or failed
    firing, a plan whose planning ended)."""
    found = await get_background_run(ports, organization_id, run_id)
    if found.is_finished:
        raise Conflict(f"the {found.type.value} already finished ({found.status})", {"status": found.status.value})
    if found.type is BackgroundType.WORKFLOW_RUN:
        await workflow_runs.cancel_run(ports, organization_id, found.id)
    elif found.type is BackgroundType.TASK_PLAN:
        await task_plans.cancel_plan(ports, organization_id, found.id)
    elif found.workflow_run_id is not None:
        await workflow_runs.cancel_run(ports, organization_id, found.workflow_run_id)
    elif found.execution_id is not None:
        await completion.cancel(ports, organization_id, found.execution_id)
    return await get_background_run(ports, organization_id, run_id)
