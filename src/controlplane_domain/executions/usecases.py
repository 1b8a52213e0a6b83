"""Executions: execute, lease (long poll), append events, complete, cancel, reap expired leases, read."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeVar

from controlplane_domain.agents.entity import Agent
from controlplane_domain.config import JSONObject
from controlplane_domain.environments.entity import QueueStatus, WorkerQueue
from controlplane_domain.environments.usecases import is_uuid
from controlplane_domain.errors import Conflict, DomainError, NotFound, TransientFailure, ValidationFailed
from controlplane_domain.executions.entity import (
    SERVER_EVENTS,
    EventType,
    Execution,
    ExecutionEvent,
    ExecutionStatus,
    LeaseTerms,
    NewEvent,
    TargetType,
    leased,
)
from controlplane_domain.executions.entity import numbered as _numbered
from controlplane_domain.executions.entity import status_event as _status
from controlplane_domain.executions.ports import ExecutionFilter, Leased
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient
from controlplane_domain.teams.entity import TeamView
from controlplane_domain.teams.usecases import require_team
from controlplane_domain.workers.entity import Worker

S = ExecutionStatus
FINISHING = frozenset({S.COMPLETED, S.FAILED, S.CANCELLED})
PROMPT_MAX_LENGTH = 200_000
MAX_EVENTS_PER_BATCH = 500


class StaleAttempt(Conflict):
    """The caller's lease is no longer the execution's current one."""

    code = "STALE_ATTEMPT"


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecuteCommand:
    prompt: str
    worker_queue_id: str
    stream: bool = False


@dataclass(frozen=True, slots=True)
class Lease:
    """A leased execution and what the worker needs to run it."""

    execution: Execution
    agent: Agent | None
    team: TeamView | None


@dataclass(frozen=True, slots=True, kw_only=True)
class CompleteCommand:
    worker_id: str
    attempt: int
    status: ExecutionStatus
    response: str | None = None
    error: str | None = None
    usage: JSONObject = field(default_factory=dict)


T = TypeVar("T")
NO_BUS_POLL_SECONDS = 0.5  # without an event bus, how often long polls and streams look for news


def _topic(execution: Execution) -> str:
    return f"execution:{execution.id}"


async def _publish(ports: Ports, *topics: str) -> None:
    if ports.bus is not None:
        await ports.bus.publish(*topics)


def _done(execution: Execution) -> NewEvent:
    data = {"status": execution.status.value, "response": execution.response, "error": execution.error}
    return NewEvent(type=EventType.DONE, data={**data, "usage": execution.usage})


async def _require(uow: UnitOfWork, organization_id: str, execution_id: str, *, lock: bool = False) -> Execution:
    execution = await uow.executions.get(organization_id, execution_id, for_update=lock)
    if execution is None:
        raise NotFound("execution", execution_id)
    return execution


Change = tuple[Execution, Sequence[NewEvent]]  # an execution as changed, and the events that tell the change


async def _change(
    ports: Ports,
    organization_id: str,
    execution_id: str,
    decide: Callable[[Execution, datetime], Change | Execution],
    *,
    guess: bool = False,
) -> Execution:
    """Decide on an execution and record the change (or answer with the execution `decide` returns as is).

    Up to three tries, each recorded with a compare-and-set on `last_seq`: on the execution as this process last
    wrote it (`ports.recent`, no read at all: Postgres runs one statement), then read without a lock, then read
    holding the row's lock (so a busy execution still makes progress). Only a recorded change is trusted from the
    first try: an error or a no-change answer decided on a guess is decided again on what is stored. `guess`:
    whether to try the first (its answer shows the execution as guessed, with the lease expiry this process
    last wrote: fine for an event batch and a completion, which show none)."""
    known = ports.recent.get(organization_id, execution_id) if guess and ports.recent is not None else None
    for source in ("guess", "read", "locked"):
        if source == "guess" and known is None:
            continue
        async with ports.uow() as uow:
            if source == "guess" and known is not None:
                execution = known
            else:
                execution = await _require(uow, organization_id, execution_id, lock=source == "locked")
            now = ports.clock.now()
            try:
                decided = decide(execution, now)
            except DomainError:
                if source == "guess":
                    continue
                raise
            if isinstance(decided, Execution):
                if source == "guess":
                    continue
                return decided
            rows, changed = _numbered(*decided, now)
            recorded = await uow.executions.record(execution, changed, rows)
            if recorded:
                await uow.commit()
        if recorded:
            _remember(ports, changed)
            await _publish(ports, _topic(changed))
            return changed
    raise TransientFailure("the execution changed while it was being changed; please retry")


def _remember(ports: Ports, execution: Execution) -> None:
    if ports.recent is not None:
        ports.recent.remember(execution)


def _check_lease(execution: Execution, worker_id: str, attempt: int) -> None:
    if (
        execution.attempt != attempt
        or execution.worker_id != worker_id
        or execution.status not in (S.RUNNING, S.WAITING_FOR_INPUT)
    ):
        raise StaleAttempt(
            f"attempt {attempt} of worker '{worker_id}' is not the current lease of this execution "
            f"(status {execution.status}, attempt {execution.attempt})",
            {"status": execution.status.value, "attempt": execution.attempt},
        )


@retry_transient
async def execute(
    ports: Ports, organization_id: str, target: TargetType, target_id: str, command: ExecuteCommand
) -> Execution:
    """Create an execution of an agent or a team on a worker queue of the organization, queued."""
    if not command.prompt.strip():
        raise ValidationFailed("prompt", "must not be blank")
    if len(command.prompt) > PROMPT_MAX_LENGTH:
        raise ValidationFailed("prompt", f"must be at most {PROMPT_MAX_LENGTH} characters")
    if not is_uuid(command.worker_queue_id):
        raise ValidationFailed("worker_queue_id", "must be a UUID")
    now = ports.clock.now()
    pending = Execution(
        id=ports.ids.new_id(),
        organization_id=organization_id,
        target_type=target,
        agent_id=target_id if target is TargetType.AGENT else None,
        team_id=target_id if target is TargetType.TEAM else None,
        worker_queue_id=command.worker_queue_id,
        prompt=command.prompt,
        status=S.PENDING,
        max_attempts=ports.max_attempts,
        created_at=now,
        updated_at=now,
    )
    queued = pending.transition(S.QUEUED, now)
    first, queued = _numbered(queued, [_status(queued)], now)
    async with ports.uow() as uow:
        if target is TargetType.AGENT:  # the reads and the write together (one statement on Postgres)
            queue_found, agent_found = await uow.executions.add_if_found(queued, first)
            if not agent_found:
                raise NotFound("agent", target_id)
            if not queue_found:
                raise _no_such_queue()
        else:
            await require_team(uow, organization_id, target_id)
            if await uow.queues.get(organization_id, command.worker_queue_id) is None:
                raise _no_such_queue()
            await uow.executions.record(None, queued, first)
        await uow.commit()
    _remember(ports, queued)
    await _publish(ports, f"queue:{queued.worker_queue_id}", _topic(queued))
    return queued


def _no_such_queue() -> ValidationFailed:
    return ValidationFailed("worker_queue_id", "no worker queue of this organization has this id")


@retry_transient
async def try_lease(ports: Ports, organization_id: str, queue_id: str, worker_id: str) -> Lease | None:
    """Hand the oldest queued execution of an active queue to the worker, with attempt + 1 (`executions.leased`).

    The lease is one atomic write of the store (Postgres: one statement); the worker's move to this queue, when
    it served another (or none) before, is written after it."""
    if not is_uuid(queue_id):
        raise NotFound("worker queue", queue_id)
    now = ports.clock.now()
    terms = LeaseTerms(worker_id, now, now + timedelta(seconds=ports.lease_timeout_seconds))
    async with ports.uow() as uow:
        outcome = await uow.executions.lease_next(organization_id, queue_id, terms)
        if outcome.queue is None:
            raise NotFound("worker queue", queue_id)
        running = outcome.execution
        team = None
        if running is not None and running.team_id:
            stored = await uow.teams.get(organization_id, running.team_id)
            if stored is not None:
                team = TeamView(stored, await uow.agents.list_by_teams(organization_id, [stored.id]))
        await uow.commit()
    if running is not None:
        _remember(ports, running)
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
    await _publish(ports, _topic(running))
    return Lease(running, outcome.agent, team)


async def lease_in_steps(
    queue: WorkerQueue | None,
    worker: Worker | None,
    execution: Execution | None,
    agent: Agent | None,
    terms: LeaseTerms,
    record: Callable[[Execution, Execution, Sequence[ExecutionEvent]], Awaitable[bool]],
) -> Leased:
    """`ExecutionRepository.lease_next` for a store that reads first, then records (memory; SQLite, whose
    writer holds the database lock): `execution` is the queue's oldest queued one, `record` the store's own."""
    if queue is None:
        return Leased(None, None, None, None)
    if queue.status is not QueueStatus.ACTIVE or execution is None:
        return Leased(queue, worker, None, None)
    running, events = leased(execution, terms)
    if not await record(execution, running, events):  # the writer holds the lock: only a broken store fails
        raise TransientFailure("the execution changed while it was being leased")
    return Leased(queue, worker, running, agent)


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


HUNG_UP = "handed back: the worker hung up before the lease reached it"
WENT_OFFLINE = "its worker went offline"
WENT_IDLE = "its worker reported itself idle without it"


@retry_transient
async def hand_back(ports: Ports, leased: Execution, *, reason: str = HUNG_UP) -> Execution | None:
    """Take a lease back from its worker at once, as the reaper does when a lease expires: queued again (the
    attempt it took stays spent: attempt numbers only grow and `max_attempts` holds, so an execution that keeps
    losing its workers still ends), failed when it was the last attempt, or cancelled when a cancellation was
    asked for. Nothing changes when the lease is no longer current (it expired and was reaped, say); the
    execution as it then is, or None when it is gone."""

    def give_back(execution: Execution, now: datetime) -> Change | Execution:
        if (
            execution.status is not S.RUNNING
            or execution.worker_id != leased.worker_id
            or execution.attempt != leased.attempt
        ):
            return execution
        return _lease_ended(execution, now, reason=reason, cancelled="cancelled; its worker let it go", failed=reason)

    try:
        handed = await _change(ports, leased.organization_id, leased.id, give_back)
    except NotFound:
        return None
    if handed.status is S.QUEUED:
        await _publish(ports, f"queue:{handed.worker_queue_id}")
    return handed


async def release_held(
    ports: Ports,
    held: Sequence[Execution],
    *,
    reason: str = WENT_OFFLINE,
    leased_before: datetime | None = None,
    keep: str | None = None,
) -> list[Execution]:
    """A worker that reports that it holds nothing (offline, or idle): each execution of `held` (what it holds,
    as just read) is taken back at once (`hand_back`) rather than when its lease expires, or never (its
    heartbeats renew every lease it holds). With `leased_before`, only those leased before then; `keep`, the one
    the worker names as its current task, stays. What it still holds."""
    kept: list[Execution] = []
    for execution in held:
        started = execution.started_at
        if execution.id == keep or (leased_before is not None and (started is None or started >= leased_before)):
            kept.append(execution)
        else:
            await hand_back(ports, execution, reason=reason)
    return kept


def _lease_ended(execution: Execution, now: datetime, *, reason: str, cancelled: str, failed: str) -> Change:
    """What becomes of a running execution whose lease ended without its worker finishing it (it expired, or was
    taken back): cancelled when a cancellation was asked for; queued again while attempts remain (the one it took
    stays spent), with `reason` in its status event; failed after the last, `failed` naming how far it got."""
    if execution.cancel_requested:
        changed = execution.transition(S.CANCELLED, now, error=cancelled)
        return changed, [_status(changed), _done(changed)]
    if execution.attempt < execution.max_attempts:
        changed = execution.transition(S.QUEUED, now, worker_id=None, lease_expires_at=None)
        return changed, [_status(changed, reason=reason)]
    error = f"{failed} on attempt {execution.attempt} of {execution.max_attempts}"
    changed = execution.transition(S.FAILED, now, error=error, lease_expires_at=None)
    return changed, [_status(changed), _done(changed)]


@retry_transient
async def append_events(
    ports: Ports, organization_id: str, execution_id: str, worker_id: str, attempt: int, events: Sequence[NewEvent]
) -> Execution:
    """Append a batch of the worker's events; a stale attempt is refused (409)."""
    if len(events) > MAX_EVENTS_PER_BATCH:
        raise ValidationFailed("events", f"at most {MAX_EVENTS_PER_BATCH} events per batch")
    for index, event in enumerate(events):
        if event.type in SERVER_EVENTS:
            raise ValidationFailed(f"events.{index}.type", f"'{event.type}' events are written by the service")

    def add(execution: Execution, now: datetime) -> Change:
        _check_lease(execution, worker_id, attempt)
        return execution, events

    return await _change(ports, organization_id, execution_id, add, guess=True)


@retry_transient
async def complete(ports: Ports, organization_id: str, execution_id: str, command: CompleteCommand) -> Execution:
    """Finish the current attempt; repeating the same completion changes nothing, a stale one is 409."""
    if command.status not in FINISHING:
        raise ValidationFailed("status", "must be completed, failed or cancelled")

    def finish(execution: Execution, now: datetime) -> Change | Execution:
        if (
            execution.is_terminal
            and execution.attempt == command.attempt
            and execution.worker_id == command.worker_id
            and execution.status is command.status
            and execution.response == command.response
            and execution.error == command.error  # (the reaper's failure of an expired lease is not this one)
        ):
            return execution
        _check_lease(execution, command.worker_id, command.attempt)
        finished = execution.transition(
            command.status,
            now,
            response=command.response,
            error=command.error,
            usage=dict(command.usage),
            lease_expires_at=None,
        )
        return finished, [_status(finished), _done(finished)]

    return await _change(ports, organization_id, execution_id, finish, guess=True)


@retry_transient
async def cancel(ports: Ports, organization_id: str, execution_id: str) -> Execution:
    """Cancel now when no worker holds it; otherwise ask its worker (via heartbeat commands) to stop."""

    def stop(execution: Execution, now: datetime) -> Change | Execution:
        if execution.is_terminal:
            raise Conflict(f"the execution already finished ({execution.status})", {"status": execution.status.value})
        if execution.status in (S.PENDING, S.QUEUED):
            cancelled = execution.transition(S.CANCELLED, now, error="cancelled before a worker started it")
            return cancelled, [_status(cancelled), _done(cancelled)]
        if execution.cancel_requested:
            return execution
        note = NewEvent(type=EventType.LOG, data={"message": "cancellation requested", "cancel_requested": True})
        return execution.changed(cancel_requested=True, updated_at=now), [note]

    return await _change(ports, organization_id, execution_id, stop)


@retry_transient
async def reap_expired_leases(ports: Ports, limit: int = 100) -> int:
    """Re-queue executions whose worker stopped heartbeating (attempt + 1 on the next lease), up to the
    maximum of attempts; then fail them. A cancellation that was requested is honoured instead."""
    now = ports.clock.now()
    touched: list[Execution] = []
    async with ports.uow() as uow:
        for execution in await uow.executions.expired_leases(now, limit):
            changed, events = _lease_ended(
                execution,
                now,
                reason="lease expired",
                cancelled="cancelled; its worker stopped responding",
                failed="no worker finished it: the lease expired",
            )
            rows, changed = _numbered(changed, events, now)
            if not await uow.executions.record(execution, changed, rows):  # locked: only a broken store fails
                raise TransientFailure("an expired lease changed while it was being reaped")
            touched.append(changed)
        await uow.commit()
    for changed in touched:
        _remember(ports, changed)
        await _publish(ports, _topic(changed), f"queue:{changed.worker_queue_id}")
    return len(touched)


async def get_execution(ports: Ports, organization_id: str, execution_id: str) -> Execution:
    async with ports.read() as uow:
        return await _require(uow, organization_id, execution_id)


async def list_executions(
    ports: Ports, organization_id: str, page: PageRequest, where: ExecutionFilter
) -> Page[Execution]:
    async with ports.read() as uow:
        items, total = await uow.executions.list_page(organization_id, page, where)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


async def list_events(ports: Ports, organization_id: str, execution_id: str, page: PageRequest) -> Page[ExecutionEvent]:
    """Events in sequence order; `offset` skips that many (so it equals the last sequence number seen)."""
    async with ports.read() as uow:
        execution = await _require(uow, organization_id, execution_id)
        past_the_end = page.offset >= execution.last_seq  # (an offset no store's sequence numbers reach included)
        items = (
            []
            if past_the_end
            else await uow.executions.events_after(organization_id, execution_id, page.offset, page.limit)
        )
    return Page(items=items, total=execution.last_seq, limit=page.limit, offset=page.offset)


EVENTS_PAGE = 200


async def read_events_after(
    ports: Ports, organization_id: str, execution_id: str, after_seq: int
) -> list[ExecutionEvent]:
    """Up to EVENTS_PAGE events after `after_seq`, in order."""
    async with ports.read() as uow:
        return await uow.executions.events_after(organization_id, execution_id, after_seq, EVENTS_PAGE)


async def follow(
    ports: Ports,
    organization_id: str,
    execution_id: str,
    after_seq: int,
    keepalive_seconds: float,
    read_after: Callable[[str, str, int], Awaitable[list[ExecutionEvent]]] | None = None,
) -> AsyncIterator[ExecutionEvent | None]:
    """Every event after `after_seq`, pushed as it is appended, ending after the terminal one.
    Yields None when `keepalive_seconds` pass without an event (time for a keep-alive).
    `read_after` may share reads between followers (see the adapters' EventTail)."""
    await get_execution(ports, organization_id, execution_id)

    async def direct(organization: str, execution: str, seq: int) -> list[ExecutionEvent]:
        return await read_events_after(ports, organization, execution, seq)

    reader = read_after or direct
    subscription = ports.bus.subscribe(f"execution:{execution_id}") if ports.bus is not None else None
    last = after_seq
    # The execution is looked at when a read finds nothing new on the first pass or after a wait that ended in
    # silence: every terminal change appends a done event (which ends the stream), so after a batch or a
    # wake-up an empty read only means "caught up", and a thousand woken streams make no thousand lookups.
    look = True
    quiet_since = time.monotonic()
    try:
        while True:
            events = await reader(organization_id, execution_id, last)
            execution = None
            if not events and look:
                async with ports.read() as uow:
                    execution = await _require(uow, organization_id, execution_id)
            for event in events:
                yield event
                last = event.seq
                if event.type is EventType.DONE:
                    return
            if execution is not None and execution.is_terminal and last >= execution.last_seq:
                return
            if events:
                look = False
                quiet_since = time.monotonic()
                continue
            if subscription is not None:
                woke = await subscription.wait(keepalive_seconds)
            else:  # no bus (an embedder's Ports): nothing wakes the stream, so it looks again every little while
                await asyncio.sleep(min(keepalive_seconds, NO_BUS_POLL_SECONDS))
                woke = time.monotonic() - quiet_since < keepalive_seconds
            if not woke:
                yield None
                quiet_since = time.monotonic()
            look = not woke
    finally:
        if subscription is not None:
            subscription.close()
