"""Worker use cases: heartbeats register and refresh workers."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from controlplane_domain.config import JSONObject
from controlplane_domain.environments.entity import MISSED_HEARTBEATS_BEFORE_OFFLINE
from controlplane_domain.errors import ValidationFailed, found
from controlplane_domain.executions.entity import Execution, ExecutionStatus
from controlplane_domain.executions.lease_ends import WENT_IDLE, WENT_OFFLINE, release_held
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient
from controlplane_domain.rules import TextIsNotBlank, TextIsNotTooLong, check_rule
from controlplane_domain.webhooks.listeners import DUE
from controlplane_domain.workers.entity import (
    MAX_TASKS_PROCESSED,
    Worker,
    WorkerStatus,
)
from controlplane_domain.workers.webhook_events import worker_status_changed

log = logging.getLogger("controlplane.heartbeats")

LAST_SEEN_PRECISION = timedelta(seconds=1)
# A worker that reports itself idle holds nothing: the leases it holds that are older than this were lost on the
# way to it (a lease answer cut off) and are taken back; younger ones may still be on their way.
IDLE_GRACE_SECONDS = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordHeartbeat:
    worker_id: str
    environment_name: str
    status: WorkerStatus = WorkerStatus.ACTIVE
    tasks_processed: int = 0
    current_task_id: str | None = None
    worker_metadata: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Command:
    """Something the service asks a worker to do, delivered with the heartbeat answer."""

    type: str
    execution_id: str


@dataclass(frozen=True, slots=True)
class HeartbeatReceipt:
    """What a worker learns from a heartbeat: its state, the interval to keep, and pending commands."""

    worker: Worker
    registered: bool
    received_at: datetime
    commands: list[Command] = field(default_factory=list)
    leases_extended: int = 0


@retry_transient
async def record_heartbeat(ports: Ports, organization_id: str, command: RecordHeartbeat) -> HeartbeatReceipt:
    """Record a heartbeat; an unknown worker id registers the worker in the caller's organization.

    With a heartbeat buffer (ports.heartbeats), a known worker's report waits there for the next flush unless
    a lease it holds needs renewing; without one, a report that changes nothing within a second is not written.
    Registrations and lease renewals are written at once either way."""
    check_rule(TextIsNotBlank("worker_id", command.worker_id))
    check_rule(TextIsNotTooLong("worker_id", command.worker_id, 255))
    check_rule(TextIsNotBlank("environment_name", command.environment_name))
    if not 0 <= command.tasks_processed <= MAX_TASKS_PROCESSED:
        raise ValidationFailed("tasks_processed", f"must be between 0 and {MAX_TASKS_PROCESSED}")
    now = ports.clock.now()
    buffer = ports.heartbeats
    async with ports.read() as uow:
        waiting = buffer.latest(organization_id, command.worker_id) if buffer is not None else None
        stored, held = await uow.workers.worker_and_held(organization_id, command.worker_id)
        known = waiting or stored
        timed_out = await _timed_out_task(uow, organization_id, command, held)
    if held and command.status in (WorkerStatus.OFFLINE, WorkerStatus.IDLE):  # it says it runs nothing
        offline = command.status is WorkerStatus.OFFLINE
        held = await release_held(
            ports,
            held,
            reason=WENT_OFFLINE if offline else WENT_IDLE,
            # an idle worker keeps a young lease (its answer may still be on its way) and any it names
            leased_before=None if offline else now - timedelta(seconds=IDLE_GRACE_SECONDS),
            keep=command.current_task_id,
        )
    worker = _reported(ports, organization_id, command, known, held, now)
    commands = [Command("cancel", e.id) for e in held if e.cancel_requested]
    if timed_out is not None:
        commands.append(Command("cancel", timed_out))
    previous = None if known is None else known.effective_status(now)
    came_or_went = _online(previous) != _online(worker.status)  # (written at once, with its webhooks' event)
    if known is not None and not came_or_went and not _leases_need_renewal(ports, held, now):
        if buffer is not None:
            buffer.hold(worker)
            return HeartbeatReceipt(worker, False, now, commands, 0)
        if not _changed(known, worker, now):
            return HeartbeatReceipt(known, False, now, commands, 0)  # a repeat: leave without writing
    async with ports.uow() as uow:
        # Of two concurrent first heartbeats, one registers the worker; the other updates it (an upsert that keeps
        # the registration time), and both leave one worker.
        registered = known is None and await uow.workers.register(worker)
        if not registered:
            await uow.workers.save(worker)
        extended = await uow.executions.extend_leases(
            organization_id, command.worker_id, now + timedelta(seconds=ports.lease_timeout_seconds)
        )
        announced = came_or_went and await worker_status_changed(ports, uow, previous, worker, now)
        await uow.commit()
    if buffer is not None:
        buffer.written(worker)
    if announced and ports.bus is not None:
        await ports.bus.publish(DUE)
    return HeartbeatReceipt(worker, registered, now, commands, extended)


SILENT_BATCH = 100


@retry_transient
async def mark_silent_workers(ports: Ports) -> int:
    """Store `offline` for the workers that fell silent (no heartbeat for three of their intervals) and send their
    `worker.status_changed`, in one transaction; how many. Every node's lease reaper runs it: each worker is
    marked once (a compare-and-set of its status and last heartbeat), and one that heartbeats meanwhile is not."""
    now = ports.clock.now()
    silence = timedelta(seconds=ports.worker_heartbeat_interval_seconds * MISSED_HEARTBEATS_BEFORE_OFFLINE)
    async with ports.read() as uow:  # (most sweeps find nobody: they write nothing, and take no write lock)
        if not await uow.workers.silent_since(now - silence, 1, 0):
            return 0
    marked = 0
    announced = False
    async with ports.uow() as uow:
        skipped = 0  # (a marked worker leaves the query's answer; one not marked stays, and is skipped)
        while True:
            page = await uow.workers.silent_since(now - silence, SILENT_BATCH, skipped)
            for worker in page:
                # (a row written under a longer interval falls silent later than the setting says)
                silent = worker.effective_status(now) is WorkerStatus.OFFLINE
                if not silent or not await uow.workers.mark_offline(worker):
                    skipped += 1
                    continue
                went = replace(worker, status=WorkerStatus.OFFLINE)
                announced = await worker_status_changed(ports, uow, worker.status, went, now) or announced
                marked += 1
            if len(page) < SILENT_BATCH:
                break
        await uow.commit()
    if announced and ports.bus is not None:
        await ports.bus.publish(DUE)
    return marked


async def _timed_out_task(
    uow: UnitOfWork, organization_id: str, command: RecordHeartbeat, held: Sequence[Execution]
) -> str | None:
    """The worker's current task when the service timed it out under it (a workflow step past its timeout): the
    worker is told to stop it, as a cancel. (A read only when the task it names is not one it holds.)"""
    task = command.current_task_id
    if task is None or any(execution.id == task for execution in held):
        return None
    execution = await uow.executions.get(organization_id, task)
    if execution is None or execution.status is not ExecutionStatus.TIMED_OUT:
        return None
    return task if execution.worker_id == command.worker_id else None


def _reported(
    ports: Ports,
    organization_id: str,
    command: RecordHeartbeat,
    known: Worker | None,
    held: Sequence[Execution],
    now: datetime,
) -> Worker:
    return Worker(
        worker_id=command.worker_id,
        organization_id=organization_id,
        environment_name=command.environment_name,
        status=command.status,
        tasks_processed=command.tasks_processed,
        current_task_id=command.current_task_id,
        worker_metadata=dict(command.worker_metadata),
        heartbeat_interval_seconds=ports.worker_heartbeat_interval_seconds,
        registered_at=known.registered_at if known else now,
        last_heartbeat_at=now,
        queue_id=held[0].worker_queue_id if held else (known.queue_id if known else None),
    )


def _online(status: WorkerStatus | None) -> bool:
    return status is not None and status is not WorkerStatus.OFFLINE


def _changed(known: Worker, worker: Worker, now: datetime) -> bool:
    """Something reported changed, or last-seen is a second old."""
    return replace(known, last_heartbeat_at=now) != worker or now - known.last_heartbeat_at >= LAST_SEEN_PRECISION


def _leases_need_renewal(ports: Ports, held: Sequence[Execution], now: datetime) -> bool:
    renew_before = now + timedelta(seconds=ports.lease_timeout_seconds) - LAST_SEEN_PRECISION
    return any(e.lease_expires_at is None or e.lease_expires_at < renew_before for e in held)


async def get_worker(ports: Ports, organization_id: str, worker_id: str) -> Worker:
    buffer = ports.heartbeats
    earlier = buffer.latest(organization_id, worker_id) if buffer is not None else None
    async with ports.read() as uow:
        worker = found(await uow.workers.get(organization_id, worker_id), "worker", worker_id)
    return buffer.newest(worker, earlier) if buffer is not None else worker


async def list_workers(ports: Ports, organization_id: str, page: PageRequest) -> Page[Worker]:
    earlier = ports.heartbeats.snapshot() if ports.heartbeats is not None else None
    async with ports.read() as uow:
        items, total = await uow.workers.list_page(organization_id, page)
    if ports.heartbeats is not None:
        items = ports.heartbeats.overlay(items, earlier)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)
