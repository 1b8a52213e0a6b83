"""Environments and worker queues."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from controlplane_domain import crud
from controlplane_domain.config import JSONObject
from controlplane_domain.crud import Area
from controlplane_domain.environments.entity import (
    MAX_QUEUE_WORKERS,
    MISSED_HEARTBEATS_BEFORE_OFFLINE,
    Environment,
    EnvironmentStatus,
    QueueStatus,
    QueueView,
    WorkerQueue,
)
from controlplane_domain.errors import Conflict, ValidationFailed
from controlplane_domain.names import check_name, is_uuid
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.references import REFERRERS_SHOWN, Dangling, Kind, Target, check_unreferenced
from controlplane_domain.retry import retry_transient


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateEnvironment:
    name: str
    description: str | None = None
    status: EnvironmentStatus = EnvironmentStatus.ACTIVE
    variables: dict[str, str] = field(default_factory=dict)
    metadata: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateEnvironment:
    name: str | Unset = UNSET
    description: str | Unset | None = UNSET
    status: EnvironmentStatus | Unset = UNSET
    variables: dict[str, str] | Unset = UNSET
    metadata: JSONObject | Unset = UNSET


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateQueue:
    name: str
    description: str | None = None
    status: QueueStatus = QueueStatus.ACTIVE
    max_workers: int | None = None
    heartbeat_interval_seconds: int = 30


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateQueue:
    name: str | Unset = UNSET
    description: str | Unset | None = UNSET
    status: QueueStatus | Unset = UNSET
    max_workers: int | Unset | None = UNSET
    heartbeat_interval_seconds: int | Unset = UNSET


ENVIRONMENTS = Area("environment", lambda uow: uow.environments)
QUEUES = Area("worker queue", lambda uow: uow.queues, Kind.WORKER_QUEUE, valid_id=is_uuid)


def _check_environment(environment: Environment) -> None:
    check_name("name", environment.name)


async def require_environment(
    uow: UnitOfWork, organization_id: str, environment_id: str, *, lock: bool = False
) -> Environment:
    """The environment of this organization, or NotFound; `lock`: locked until the unit of work ends."""
    return await crud.require(ENVIRONMENTS, uow, organization_id, environment_id, lock=lock)


async def require_queue(uow: UnitOfWork, organization_id: str, queue_id: str, *, lock: bool = False) -> WorkerQueue:
    """The queue of this organization, or NotFound; `lock`: locked until the unit of work ends."""
    return await crud.require(QUEUES, uow, organization_id, queue_id, lock=lock)


@retry_transient
async def create_environment(ports: Ports, organization_id: str, command: CreateEnvironment) -> Environment:
    environment = crud.new(Environment, ports, organization_id, command)
    _check_environment(environment)
    return await crud.add(ENVIRONMENTS, ports, environment)


async def get_environment(ports: Ports, organization_id: str, environment_id: str) -> Environment:
    return await crud.get(ENVIRONMENTS, ports, organization_id, environment_id)


async def list_environments(ports: Ports, organization_id: str, page: PageRequest) -> Page[Environment]:
    return await crud.list_page(ENVIRONMENTS, ports, organization_id, page)


@retry_transient
async def update_environment(
    ports: Ports, organization_id: str, environment_id: str, command: UpdateEnvironment
) -> Environment:
    return await crud.patch(ENVIRONMENTS, ports, organization_id, environment_id, command, _check_environment)


@retry_transient
async def delete_environment(
    ports: Ports, organization_id: str, environment_id: str, *, force: bool = False
) -> Dangling:
    """Delete an environment. Its worker queues and the worker keys bound to it: 409 IN_USE. With `force` its queues
    are deleted with it, each by the queue's own rule (409 CONFLICT while one has unfinished executions), and what
    named them or the environment is left naming nothing (references.py)."""
    async with ports.uow() as uow:
        await require_environment(uow, organization_id, environment_id, lock=True)
        target = Target(Kind.ENVIRONMENT, environment_id)
        dangling = await check_unreferenced(uow, organization_id, target, force=force)
        left = [referrer for referrer in dangling.referrers if referrer.type != "worker_queue"]
        more = dangling.more
        page = PageRequest(limit=REFERRERS_SHOWN)
        while queues := (await uow.queues.list_page(organization_id, page, environment_id=environment_id))[0]:
            for queue in queues:  # (only when forced: a queue is a referrer)
                gone = await _delete_queue(uow, organization_id, queue.id, force=True)
                left.extend(gone.referrers)
                more = more or gone.more
        await uow.environments.delete(organization_id, environment_id)
        await uow.commit()
    unique = tuple(dict.fromkeys(left))
    return Dangling(unique[:REFERRERS_SHOWN], more or len(unique) > REFERRERS_SHOWN)


def _check_queue(queue: WorkerQueue) -> None:
    check_name("name", queue.name)
    if queue.max_workers is not None and not 1 <= queue.max_workers <= MAX_QUEUE_WORKERS:
        raise ValidationFailed("max_workers", f"must be between 1 and {MAX_QUEUE_WORKERS}")
    if not 1 <= queue.heartbeat_interval_seconds <= 3600:
        raise ValidationFailed("heartbeat_interval_seconds", "must be between 1 and 3600")


async def _views(ports: Ports, uow: UnitOfWork, queues: list[WorkerQueue]) -> list[QueueView]:
    if not queues:
        return []
    organization_id = queues[0].organization_id
    ids = [queue.id for queue in queues]
    queued = await uow.executions.count_queued(organization_id, ids)
    longest = max(queue.heartbeat_interval_seconds for queue in queues)
    since = ports.clock.now() - timedelta(seconds=longest * MISSED_HEARTBEATS_BEFORE_OFFLINE)
    active = await uow.workers.count_active(organization_id, ids, since)
    return [QueueView(queue, active.get(queue.id, 0), queued.get(queue.id, 0)) for queue in queues]


@retry_transient
async def create_queue(ports: Ports, organization_id: str, environment_id: str, command: CreateQueue) -> QueueView:
    queue = crud.new(WorkerQueue, ports, organization_id, command, id=str(uuid.uuid4()), environment_id=environment_id)
    _check_queue(queue)

    async def environment_exists(uow: UnitOfWork, queue: WorkerQueue) -> WorkerQueue:
        await require_environment(uow, organization_id, environment_id)
        return queue

    return QueueView(await crud.add(QUEUES, ports, queue, environment_exists), 0, 0)


async def get_queue(ports: Ports, organization_id: str, queue_id: str) -> QueueView:
    async with ports.read() as uow:
        queue = await require_queue(uow, organization_id, queue_id)
        return (await _views(ports, uow, [queue]))[0]


async def list_queues(
    ports: Ports, organization_id: str, page: PageRequest, *, environment_id: str | None = None
) -> Page[QueueView]:
    async with ports.read() as uow:
        if environment_id is not None:
            await require_environment(uow, organization_id, environment_id)
        items, total = await uow.queues.list_page(organization_id, page, environment_id=environment_id)
        views = await _views(ports, uow, items)
    return Page(items=views, total=total, limit=page.limit, offset=page.offset)


@retry_transient
async def update_queue(ports: Ports, organization_id: str, queue_id: str, command: UpdateQueue) -> QueueView:
    async with ports.uow() as uow:
        queue = await require_queue(uow, organization_id, queue_id, lock=True)
        updated = crud.patched(queue, command, ports.clock.now())
        _check_queue(updated)
        await uow.queues.update(updated)
        view = (await _views(ports, uow, [updated]))[0]
        await uow.commit()
    if ports.bus is not None and updated.status is QueueStatus.ACTIVE:
        await ports.bus.publish(f"queue:{updated.id}")
    return view


@retry_transient
async def delete_queue(ports: Ports, organization_id: str, queue_id: str, *, force: bool = False) -> Dangling:
    """Delete a queue with no queued or running executions (409 CONFLICT otherwise, forced or not). Jobs, workflow
    steps and worker keys naming it: 409 IN_USE, or with `force` left naming nothing (references.py)."""
    async with ports.uow() as uow:
        await require_queue(uow, organization_id, queue_id, lock=True)
        dangling = await _delete_queue(uow, organization_id, queue_id, force=force)
        await uow.commit()
    return dangling


async def _delete_queue(uow: UnitOfWork, organization_id: str, queue_id: str, *, force: bool) -> Dangling:
    if await uow.executions.count_unfinished(organization_id, queue_id):
        raise Conflict("the queue still has unfinished executions; cancel them or let them finish")
    dangling = await check_unreferenced(uow, organization_id, Target(Kind.WORKER_QUEUE, queue_id), force=force)
    await uow.queues.delete(organization_id, queue_id)
    return dangling
