"""Runner use cases: read the organization's workers (bounded), group them by runner, page by name."""

from __future__ import annotations

from controlplane_domain.errors import NotFound
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.ports import Ports
from controlplane_domain.runners.grouping import Runner, group_runners, runner_name
from controlplane_domain.workers.entity import Worker

# The most workers of one organization a runners' read looks at: those heard from most recently. Past it, the
# workers silent the longest (offline for longer than every other) are left out of the counts.
MAX_WORKERS_READ = 10_000


async def _workers(ports: Ports, organization_id: str) -> list[Worker]:
    earlier = ports.heartbeats.snapshot() if ports.heartbeats is not None else None
    async with ports.read() as uow:
        workers = await uow.workers.recent(organization_id, MAX_WORKERS_READ)
    if ports.heartbeats is not None:  # reports not written yet: what a read of each worker answers
        workers = ports.heartbeats.overlay(workers, earlier)
    return workers


async def list_runners(ports: Ports, organization_id: str, page: PageRequest) -> Page[Runner]:
    runners = group_runners(await _workers(ports, organization_id), ports.clock.now())
    items = runners[page.offset : page.offset + page.limit]
    return Page(items=items, total=len(runners), limit=page.limit, offset=page.offset)


async def get_runner(ports: Ports, organization_id: str, name: str) -> Runner:
    """The runner of this exact name (case included); NotFound when no worker of the organization has it."""
    workers = [worker for worker in await _workers(ports, organization_id) if runner_name(worker) == name]
    if not workers:
        raise NotFound("runner", name)
    return group_runners(workers, ports.clock.now())[0]
