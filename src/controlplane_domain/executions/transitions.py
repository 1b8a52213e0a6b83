"""What the executions' use cases share: how a change of an execution is decided and recorded (`change`), then
remembered and published; the lease check of a worker's reports."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from controlplane_domain.errors import Conflict, DomainError, TransientFailure, found
from controlplane_domain.executions.entity import (
    EventType,
    Execution,
    ExecutionEvent,
    ExecutionStatus,
    NewEvent,
)
from controlplane_domain.executions.entity import numbered as _numbered
from controlplane_domain.executions.ports import ExecutionOwners
from controlplane_domain.executions.webhook_events import execution_changed
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.webhooks.events import enqueue_all
from controlplane_domain.webhooks.listeners import DUE

S = ExecutionStatus


class StaleAttempt(Conflict):
    """The caller's lease is no longer the execution's current one."""

    code = "STALE_ATTEMPT"


NO_BUS_POLL_SECONDS = 0.5  # without an event bus, how often long polls and streams look for news


def topic(execution: Execution) -> str:
    return f"execution:{execution.id}"


async def publish(ports: Ports, *topics: str) -> None:
    if ports.bus is not None:
        await ports.bus.publish(*topics)


def done_event(execution: Execution) -> NewEvent:
    data = {"status": execution.status.value, "response": execution.response, "error": execution.error}
    return NewEvent(type=EventType.DONE, data={**data, "usage": execution.usage})


async def require_execution(
    uow: UnitOfWork, organization_id: str, execution_id: str, *, lock: bool = False
) -> Execution:
    return found(await uow.executions.get(organization_id, execution_id, for_update=lock), "execution", execution_id)


Change = tuple[Execution, Sequence[NewEvent]]  # an execution as changed, and the events that tell the change


async def change(
    ports: Ports,
    organization_id: str,
    execution_id: str,
    decide: Callable[[Execution, datetime], Change | Execution],
    *,
    guess: bool = False,
) -> Execution:
    """Decide on an execution and record the change (or answer with the execution `decide` returns as is).

    Up to three tries, each recorded with a compare-and-set on `last_seq`: on the execution as this process last
    wrote it (`ports.recent`, no read at all: the change is the unit of work's one write), then read without a
    lock, then read holding the row's lock (so a busy execution still makes progress). Only a recorded change is
    trusted from the first try: an error or a no-change answer decided on a guess is decided again on what is
    stored. `guess`:
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
                execution = await require_execution(uow, organization_id, execution_id, lock=source == "locked")
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
            advanced: set[str] | None = None
            outbox = await execution_changed(ports, uow, execution, changed, rows)  # (none where nobody listens)
            if changed.is_terminal and not execution.is_terminal and changed.has_owner:
                await enqueue_all(uow, outbox)
                recorded, advanced = await owner_ended(ports, uow, execution, changed, rows)
                if recorded:
                    await uow.commit()
            else:  # (an execution of no workflow run or task plan: the change, its events and its webhook events)
                recorded = await uow.commit_with(
                    lambda: uow.executions.record(execution, changed, rows, outbox=outbox)  # noqa: B023
                )
        if recorded:
            remember(ports, changed)
            await publish(ports, topic(changed), *(advanced or ()), *((DUE,) if outbox else ()))
            return changed
    raise TransientFailure("the execution changed while it was being changed; please retry")


async def owner_ended(
    ports: Ports, uow: UnitOfWork, before: Execution, after: Execution, rows: Sequence[ExecutionEvent]
) -> tuple[bool, set[str]]:
    """The end of an execution that works for something (`Execution.has_owner`), recorded with what its end
    changes in the unit of work (a slower path of several statements: the owner locked, the execution written,
    the owner changed): (recorded, the topics to publish after the commit). A workflow step's execution advances
    its run; a planning execution decides its task plan: the port `Ports.owners` (executions/ports.py)."""
    return await owners(ports).ended(ports, uow, before, after, rows)


def owners(ports: Ports) -> ExecutionOwners:
    """`ports.owners`, which an execution of a workflow run or a task plan needs."""
    if ports.owners is None:
        raise RuntimeError("Ports.owners is not wired: an execution of a workflow run or a task plan needs it")
    return ports.owners


def remember(ports: Ports, execution: Execution) -> None:
    if ports.recent is not None:
        ports.recent.remember(execution)


def check_lease(execution: Execution, worker_id: str, attempt: int) -> None:
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
