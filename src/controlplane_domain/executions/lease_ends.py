"""How a lease ends without its worker finishing it: the worker hangs up or lets it go (`hand_back`,
`release_held`), or the lease expires (`reap_expired_leases`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from controlplane_domain.errors import NotFound, TransientFailure
from controlplane_domain.executions.entity import Execution, ExecutionStatus
from controlplane_domain.executions.entity import numbered as _numbered
from controlplane_domain.executions.entity import status_event as _status
from controlplane_domain.executions.transitions import Change, change, done_event, owner_ended, publish, remember, topic
from controlplane_domain.executions.webhook_events import execution_changed
from controlplane_domain.ports import Ports
from controlplane_domain.retry import retry_transient
from controlplane_domain.webhooks.events import enqueue_all
from controlplane_domain.webhooks.listeners import DUE

S = ExecutionStatus

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
        handed = await change(ports, leased.organization_id, leased.id, give_back)
    except NotFound:
        return None
    if handed.status is S.QUEUED:
        await publish(ports, f"queue:{handed.worker_queue_id}")
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
        return changed, [_status(changed), done_event(changed)]
    if execution.attempt < execution.max_attempts:
        changed = execution.transition(S.QUEUED, now, worker_id=None, lease_expires_at=None)
        return changed, [_status(changed, reason=reason)]
    error = f"{failed} on attempt {execution.attempt} of {execution.max_attempts}"
    changed = execution.transition(S.FAILED, now, error=error, lease_expires_at=None)
    return changed, [_status(changed), done_event(changed)]


@retry_transient
async def reap_expired_leases(ports: Ports, limit: int = 100) -> int:
    """Re-queue executions whose worker stopped heartbeating (attempt + 1 on the next lease), up to the
    maximum of attempts; then fail them. A cancellation that was requested is honoured instead."""
    now = ports.clock.now()
    touched: list[Execution] = []
    topics: set[str] = set()
    async with ports.uow() as uow:  # (the expired leases' read locks them: the transaction has begun)
        for execution in await uow.executions.expired_leases(now, limit):
            changed, events = _lease_ended(
                execution,
                now,
                reason="lease expired",
                cancelled="cancelled; its worker stopped responding",
                failed="no worker finished it: the lease expired",
            )
            rows, changed = _numbered(changed, events, now)
            outbox = await execution_changed(ports, uow, execution, changed, rows)
            if outbox:
                topics.add(DUE)
            if changed.is_terminal and changed.has_owner:  # a workflow step's or a plan's: its run or plan too
                await enqueue_all(uow, outbox)
                recorded, advanced = await owner_ended(ports, uow, execution, changed, rows)
                topics.update(advanced)
            else:
                recorded = await uow.executions.record(execution, changed, rows, outbox=outbox)
            if not recorded:  # locked: only a broken store fails
                raise TransientFailure("an expired lease changed while it was being reaped")
            touched.append(changed)
        await uow.commit()
    for changed in touched:
        remember(ports, changed)
        await publish(ports, topic(changed), f"queue:{changed.worker_queue_id}")
    if topics:
        await publish(ports, *topics)
    return len(touched)
