"""Step timeouts: a step with `timeout_seconds` whose execution has been running (leased by a worker, or waiting
for input) longer than that is timed out by a sweep that every node runs; the step then follows its retry
policy (another attempt while `max_attempts` allows, else it fails and the run with it).

The timeout counts from the moment a worker leased the execution (`started_at`): time spent queued waiting for a
worker does not count. Each running step carries `timeout_at`, the earliest instant its execution can be past its
timeout (set when its execution is queued: were it leased at once); the run's `timeout_check_at` is the earliest
of its steps', an indexed column. A sweep reads the runs whose check is due, and for each, in its own transaction:

1. claims the check (`claim_timeout_check`: a compare-and-set of `timeout_check_at`, the row locked):
   of two nodes, only one goes on; the other's claim waits for the row, then finds it moved;
2. reads the run locked, then each due step's execution locked (the same order as a completion: run, then
   execution, so a completion and a timeout of one step are one after the other, and whichever comes second sees
   the first's result: a completed execution is not timed out, a timed-out one is not completed);
3. times out the executions past their timeout (`timed_out`, with the error saying so) and advances the run as
   any end of a step's execution does (`advance.step_execution_ended`); every other running step's `timeout_at`
   moves to its true deadline (leased: `started_at` + timeout) or, still queued, to now + timeout;
4. commits: the check is recorded, the executions ended and the next attempts queued at once, or none of it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from controlplane_domain.errors import TransientFailure
from controlplane_domain.executions.entity import Execution, ExecutionStatus
from controlplane_domain.executions.entity import numbered as numbered_execution
from controlplane_domain.executions.entity import status_event as execution_status
from controlplane_domain.executions.transitions import done_event, publish, remember, topic
from controlplane_domain.executions.webhook_events import execution_changed
from controlplane_domain.fairness import more_due
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient
from controlplane_domain.webhooks.listeners import DUE
from controlplane_domain.workflows.advance import Advance, step_execution_ended
from controlplane_domain.workflows.entity import StepStatus, WorkflowRun

S = ExecutionStatus
TIMEOUT_BATCH = 100
TIMEOUT_PER_ORGANIZATION = 25
"""Runs of one organization a sweep checks (docs/api-decisions.md, "Bounds"): the sweep reads every
organization's earliest due run before any organization's second (controlplane_domain/fairness.py)."""
RUNNING = frozenset({S.RUNNING, S.WAITING_FOR_INPUT})


@dataclass(frozen=True, slots=True)
class Swept:
    """What one sweep did: how many due runs it read, and how many step executions it timed out."""

    runs: int
    timed_out: int
    more: bool = False
    """Due runs may be left unread (it read a full batch, or the most of one organization): the next sweep follows
    at once."""


def timed_out_error(timeout_seconds: int) -> str:
    return f"timed out: the workflow step's timeout of {timeout_seconds} seconds passed"


async def time_out_steps(
    ports: Ports, limit: int = TIMEOUT_BATCH, per_organization: int = TIMEOUT_PER_ORGANIZATION
) -> Swept:
    """The timeout sweep (every node runs it): each run whose check is due, checked by exactly one node; the runs
    read in turns between organizations (`fairness.in_turns`), at most `per_organization` of one."""
    now = ports.clock.now()
    async with ports.read() as uow:
        due = await uow.workflow_runs.timeouts_due(now, limit, per_organization=per_organization)
    timed_out = 0
    for run in due:
        timed_out += await check_run(ports, run, now)
    more = more_due((run.organization_id for run in due), limit=limit, per_organization=per_organization)
    return Swept(len(due), timed_out, more)


@retry_transient
async def check_run(ports: Ports, run: WorkflowRun, now: datetime) -> int:
    """Check `run` (as read by the sweep) unless another node does: how many of its executions timed out."""
    ended: list[Execution] = []
    async with ports.uow() as uow:
        if not await uow.workflow_runs.claim_timeout_check(run):
            return 0  # another node checked it, or it changed meanwhile (the next sweep reads it anew)
        current = await uow.workflow_runs.get(run.organization_id, run.id, for_update=True)
        if current is None or current.is_terminal:
            return 0
        advance = Advance(current)
        for step_id in [step.id for step in current.steps]:
            execution = await _check_step(ports, uow, advance, step_id, now)
            if execution is not None:
                ended.append(execution)
        if advance.events:
            await advance.save(ports, uow, now)
        else:  # only the next check moved: not a change a client sees (updated_at stays)
            await uow.workflow_runs.update(advance.run, [])
        await uow.commit()
    for execution in ended:
        remember(ports, execution)
    await publish(ports, *(topic(execution) for execution in ended), *(advance.topics if ended else ()))
    return len(ended)


async def _check_step(ports: Ports, uow: UnitOfWork, advance: Advance, step_id: str, now: datetime) -> Execution | None:
    """A running step whose check is due: its execution timed out (and the run advanced), or its next check
    moved to its true deadline. The execution timed out, if it was."""
    step = advance.run.step(step_id)
    if step is None or step.status is not StepStatus.RUNNING or step.timeout_at is None or step.timeout_at > now:
        return None
    timeout = advance.run.definition_of(step_id).timeout_seconds
    if timeout is None or step.execution_id is None:  # (no row is written this way)
        advance.run = advance.run.with_step(replace(step, timeout_at=None))
        return None
    limit = timedelta(seconds=timeout)
    execution = await uow.executions.get(advance.run.organization_id, step.execution_id, for_update=True)
    if execution is None or execution.is_terminal:  # (its end advanced the run in the same transaction)
        advance.run = advance.run.with_step(replace(step, timeout_at=None))
        return None
    started = execution.started_at if execution.status in RUNNING else None
    if started is None or started + limit > now:  # still queued, or running within its time
        deadline = now + limit if started is None else started + limit
        advance.run = advance.run.with_step(replace(step, timeout_at=deadline))
        return None
    timed = execution.transition(S.TIMED_OUT, now, error=timed_out_error(timeout), lease_expires_at=None)
    rows, timed = numbered_execution(timed, [execution_status(timed), done_event(timed)], now)
    outbox = await execution_changed(ports, uow, execution, timed, rows)
    if outbox:
        advance.topics.add(DUE)
    if not await uow.executions.record(execution, timed, rows, outbox=outbox):  # locked: only a broken store fails
        raise TransientFailure("a step's execution changed while it was being timed out")
    await step_execution_ended(ports, uow, advance, timed, now)
    return timed
