"""Leases: a worker takes the oldest queued execution of a queue (`try_lease`, the long poll `lease`); how a lease
ends without its worker finishing it is lease_ends.py."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TypeVar

from controlplane_domain.agents.entity import Agent
from controlplane_domain.errors import DomainError, NotFound
from controlplane_domain.executions import resolution
from controlplane_domain.executions.entity import Execution, ExecutionStatus, LeaseTerms, TargetType
from controlplane_domain.executions.lease_ends import hand_back
from controlplane_domain.executions.ports import Leased
from controlplane_domain.executions.transitions import (
    NO_BUS_POLL_SECONDS,
    owners,
    publish,
    remember,
    topic,
)
from controlplane_domain.names import is_uuid
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient
from controlplane_domain.secrets.entity import SecretsKeyMissing, SecretUnreadable
from controlplane_domain.teams.entity import TeamView

S = ExecutionStatus


@dataclass(frozen=True, slots=True)
class Lease:
    """A leased execution and what the worker needs to run it (`resolved`: values for this worker only)."""

    execution: Execution
    agent: Agent | None
    team: TeamView | None
    resolved: resolution.Resolved = resolution.NOTHING_RESOLVED


T = TypeVar("T")

UNRESOLVABLE_IN_A_ROW = 10  # executions failed for their secrets before a lease answers "nothing" (the worker polls)


async def try_lease(ports: Ports, organization_id: str, queue_id: str, worker_id: str) -> Lease | None:
    """Hand the oldest queued execution of an active queue to the worker, with attempt + 1 (`executions.leased`),
    and what it needs resolved (`executions.resolution`); its secrets are revealed for this worker (each read
    recorded). An execution whose secrets cannot be revealed (a secret deleted since, no key configured, a value
    sealed by another key) fails at once saying why, and the next one is leased."""
    for _ in range(UNRESOLVABLE_IN_A_ROW):
        found = await _lease_one(ports, organization_id, queue_id, worker_id)
        if found is None:
            return None
        leased, needs = found
        names = needs.secret_names()
        if not names:
            return replace(leased, resolved=resolution.filled(needs, {}))
        try:
            values = await resolution.reveal(ports, leased.execution, names)
        except (NotFound, SecretsKeyMissing, SecretUnreadable) as exc:
            await resolution.fail_unresolvable(ports, leased.execution, f"its secrets could not be revealed: {exc}")
            continue
        except Exception:  # (the store went away, say): the worker gets an error, not this lease; give it back
            with contextlib.suppress(Exception):
                await hand_back(ports, leased.execution, reason="handed back: its secrets could not be read")
            raise
        return replace(leased, resolved=resolution.filled(needs, values))
    return None


@retry_transient
async def _lease_one(
    ports: Ports, organization_id: str, queue_id: str, worker_id: str
) -> tuple[Lease, resolution.LeaseNeeds] | None:
    """The lease itself, the unit of work's one write, committed with what the execution needs, read after it in
    the same unit of work; the worker's move to this queue, when it served another (or none) before, is written
    after it."""
    if not is_uuid(queue_id):
        raise NotFound("worker queue", queue_id)
    now = ports.clock.now()
    terms = LeaseTerms(worker_id, now, now + timedelta(seconds=ports.lease_timeout_seconds))
    async with ports.uow() as uow:
        outcome, team, needs = await uow.commit_with(
            lambda: _lease_and_read(ports, uow, organization_id, queue_id, terms)
        )
    running = outcome.execution
    if running is not None:
        remember(ports, running)
    waiting = ports.heartbeats.latest(organization_id, worker_id) if ports.heartbeats is not None else None
    worker = waiting or outcome.worker
    if worker is not None and worker.queue_id != queue_id:
        async with ports.uow() as uow:
            await uow.workers.move_to_queue(organization_id, worker_id, queue_id)
            await uow.commit()
        if ports.heartbeats is not None:  # a report waiting to be written must not move it back
            ports.heartbeats.move_to_queue(organization_id, worker_id, queue_id)
    if running is None:
        return None
    await publish(ports, topic(running))
    return Lease(running, outcome.agent, team), needs


async def _lease_and_read(
    ports: Ports, uow: UnitOfWork, organization_id: str, queue_id: str, terms: LeaseTerms
) -> tuple[Leased, TeamView | None, resolution.LeaseNeeds]:
    """`commit_with`'s write of a lease: the lease, then the reads of what its execution needs (nothing written
    after the lease)."""
    outcome = await uow.executions.lease_next(organization_id, queue_id, terms)
    if outcome.queue is None:
        raise NotFound("worker queue", queue_id)
    running = outcome.execution
    team = None
    needs = resolution.LeaseNeeds()
    if running is not None:
        if running.team_id:
            stored = await uow.teams.get(organization_id, running.team_id)
            if stored is not None:
                team = TeamView(stored, await uow.agents.list_by_teams(organization_id, [stored.id]))
        environment_id = outcome.queue.environment_id
        needs = await resolution.lease_needs(
            uow, organization_id, running.id, environment_id, outcome.agent, team, ports.secrets_cipher
        )
        if running.target_type is TargetType.PLAN:  # a task plan's planning: what to plan, with whom
            needs = replace(needs, planning=await owners(ports).planning(uow, running))
    return outcome, team, needs


async def _work_waiting(ports: Ports, organization_id: str, queue_id: str) -> bool:
    """A lock-free look: is anything queued? (Saves a write transaction per woken long poll.)"""
    async with ports.read() as uow:
        return bool((await uow.executions.count_queued(organization_id, [queue_id])).get(queue_id))


async def lease(ports: Ports, organization_id: str, queue_id: str, worker_id: str, wait_seconds: float) -> Lease | None:
    """Long poll: return as soon as work is leased, or None after `wait_seconds` without work.

    Cancelling it (the worker hung up) loses no work: a lease being recorded at that moment is finished, then
    handed back to the queue (`hand_back`), and the cancellation goes on."""
    deadline = time.monotonic() + wait_seconds
    subscription = ports.bus.subscribe(f"queue:{queue_id}") if ports.bus is not None else None
    try:
        found = await _lease_whole(ports, organization_id, queue_id, worker_id)
        while found is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if subscription is None:  # no bus (an embedder's Ports): nothing wakes the poll, so it looks again
                await asyncio.sleep(min(remaining, NO_BUS_POLL_SECONDS))
            else:
                await subscription.wait(remaining)
            if await _work_waiting(ports, organization_id, queue_id):
                found = await _lease_whole(ports, organization_id, queue_id, worker_id)
        return found
    finally:
        if subscription is not None:
            subscription.close()


async def _lease_whole(ports: Ports, organization_id: str, queue_id: str, worker_id: str) -> Lease | None:
    """`try_lease`, which a cancellation does not cut short: cut in the middle, its transaction may have committed
    or not (and the worker's move to the queue, after it, may be undone). Cancelled, it waits for the lease to be
    recorded, hands it back, and raises the cancellation."""
    leasing = asyncio.ensure_future(try_lease(ports, organization_id, queue_id, worker_id))
    try:
        return await asyncio.shield(leasing)
    except asyncio.CancelledError:  # (cancelled again meanwhile, it still finishes: the caller may cancel twice)
        found = None
        with contextlib.suppress(DomainError):  # then no lease was recorded (the queue was deleted meanwhile, say)
            found = await _through_cancellations(leasing)
        if found is not None:
            await _through_cancellations(hand_back(ports, found.execution))
        raise


async def _through_cancellations(awaitable: Awaitable[T]) -> T:
    """`awaitable`'s result, however often the caller is cancelled while it runs (the caller, already cancelled,
    raises its cancellation itself once this returns)."""
    running = asyncio.ensure_future(awaitable)
    while True:
        try:
            return await asyncio.shield(running)
        except asyncio.CancelledError:
            if running.cancelled():
                raise
