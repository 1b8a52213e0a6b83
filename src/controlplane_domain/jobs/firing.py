"""Firing a job: by hand, by the scheduler (cron, each due firing once across nodes) or by a signed webhook.

A firing writes its run and the execution it creates in one transaction (`queue_execution` in the firing's unit of
work), so that a run never names an execution that does not exist and an execution never lacks its run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from controlplane_domain.errors import DomainError, NotFound, ValidationFailed
from controlplane_domain.executions.entity import Execution, TargetType
from controlplane_domain.executions.execute import ExecuteCommand, queue_execution
from controlplane_domain.executions.transitions import publish, remember, topic
from controlplane_domain.fairness import more_due
from controlplane_domain.jobs.entity import (
    Job,
    JobRun,
    Misfire,
    Overlap,
    RunStatus,
    TargetKind,
    TriggerType,
    render_prompt,
)
from controlplane_domain.jobs.guard import JobAction, guard
from controlplane_domain.jobs.usecases import next_run, require_job
from controlplane_domain.jobs.webhook_events import jobs_fired
from controlplane_domain.policies.entity import PolicyDenied
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.principal import Principal
from controlplane_domain.retry import retry_transient
from controlplane_domain.webhooks.listeners import DUE
from controlplane_domain.workflows.entity import GONE, WorkflowRun
from controlplane_domain.workflows.entity import RunStatus as WorkflowRunStatus
from controlplane_domain.workflows.runs import StartRun, begin_run

MISFIRE_GRACE = timedelta(seconds=60)
"""A cron firing found due later than this after its time was missed (no scheduler ran then): `misfire` decides."""
DUE_BATCH = 100
"""Due firings a round of the scheduler reads (its rounds follow each other until none is left)."""
DUE_PER_ORGANIZATION = 50
"""Due firings of one organization a round (docs/api-decisions.md, "Bounds"): the round reads every
organization's earliest due firing before any organization's second (controlplane_domain/fairness.py)."""
FIRE_BATCH = 50
"""Due firings a transaction (one commit)."""


@dataclass(frozen=True, slots=True)
class Fired:
    run: JobRun
    execution: Execution | None = None
    topics: frozenset[str] = frozenset()
    """The workflow run's topics to publish once committed (a workflow target)."""
    gone: bool = False
    """It failed because its target or its queue is gone (deleted since the job was saved)."""


async def announce_fired(ports: Ports, *fired: Fired) -> None:
    """After the firings' commit: wake the workers and the followers of what they created (one publish)."""
    topics: set[str] = set()
    for each in fired:
        if each.execution is not None:
            remember(ports, each.execution)
            topics.update((f"queue:{each.execution.worker_queue_id}", topic(each.execution)))
        topics.update(each.topics)
    if topics:
        await publish(ports, *sorted(topics))


async def fire(
    ports: Ports,
    uow: UnitOfWork,
    job: Job,
    trigger: TriggerType,
    *,
    payload: dict[str, Any] | None = None,
    scheduled_for: datetime | None = None,
    webhook_id: str | None = None,
    principal: Principal | None = None,
    record: bool = True,
) -> Fired:
    """One firing of `job` in `uow` (the caller holds the job's row and commits): its run, and its execution unless
    skipped (`overlap`; a policy denied the firing of the scheduler or a webhook) or failed (its target or queue
    gone; a policy denied the execution or the workflow run; the run says why). A person's trigger that a policy
    denies is PolicyDenied (403), and nothing is written. `record=False`: the caller records the run (the scheduler
    records a batch's runs in one write)."""
    now = ports.clock.now()

    def run(
        status: RunStatus,
        *,
        execution_id: str | None = None,
        workflow_run_id: str | None = None,
        reason: str | None = None,
    ) -> JobRun:
        return JobRun(
            id=ports.ids.new_id(), organization_id=job.organization_id, job_id=job.id, trigger=trigger, fired_at=now,
            scheduled_for=scheduled_for, status=status, execution_id=execution_id, workflow_run_id=workflow_run_id,
            skipped_reason=reason, webhook_id=webhook_id, created_at=now,
        )  # fmt: skip

    asked = {"trigger": trigger.value, "payload": payload or {}, "webhook_id": webhook_id,
             "scheduled_for": None if scheduled_for is None else scheduled_for.isoformat()}  # fmt: skip
    result: Fired
    try:
        await guard(ports, JobAction.FIRE, job, principal=principal, request=asked, uow=uow)
    except PolicyDenied as exc:
        if principal is not None:  # a person's trigger: 403
            raise
        result = Fired(run(RunStatus.SKIPPED, reason=exc.message))  # the scheduler, a webhook
    else:
        result = await _fire(ports, uow, job, run, principal=principal, payload=payload)
    if result.gone and trigger is not TriggerType.MANUAL and job.enabled:
        result = await _disable(ports, uow, job, result)
    if record:
        await uow.jobs.add_run(result.run)
        if await jobs_fired(ports, uow, [result.run]):
            result = replace(result, topics=result.topics | {DUE})
    return result


GONE_DISABLED = "; the job is disabled until it names a target and a queue that exist and is enabled again"


async def _disable(ports: Ports, uow: UnitOfWork, job: Job, fired: Fired) -> Fired:
    """A scheduled or webhook firing whose target or queue is gone: its failed run says why, once, and the job
    stops firing (disabled, no next run) rather than recording the same failure at every firing. A person's
    trigger only fails: the job stays as it is (docs/api-decisions.md, "References")."""
    await uow.jobs.update(replace(job, enabled=False, next_run_at=None, updated_at=ports.clock.now()))
    reason = (fired.run.skipped_reason or "its target or queue is gone") + GONE_DISABLED
    return replace(fired, run=replace(fired.run, skipped_reason=reason))


def _failed_at_once(workflow_run: WorkflowRun) -> str | None:
    """Why a workflow run a firing started failed at once because a first step's queue, agent or team is gone
    (None otherwise): the job's run says so, and the job is disabled as for its own target gone."""
    if workflow_run.status is not WorkflowRunStatus.FAILED:
        return None
    errors = [f"step '{step.id}': {step.error}" for step in workflow_run.steps if (step.error or "").endswith(GONE)]
    return f"the workflow run failed at once: {'; '.join(errors)}" if errors else None


def _gone(exc: DomainError) -> bool:
    """Whether a firing's failure is its target or its queue missing (rather than a policy, a prompt or an input)."""
    return isinstance(exc, NotFound) or (isinstance(exc, ValidationFailed) and exc.field == "worker_queue_id")


async def _fire(
    ports: Ports,
    uow: UnitOfWork,
    job: Job,
    run: Callable[..., JobRun],
    *,
    principal: Principal | None,
    payload: dict[str, Any] | None,
) -> Fired:
    """The firing a policy let go on: skipped (overlap), failed (no queue, its target gone), or its work queued."""
    result: Fired
    if job.overlap is Overlap.SKIP and await _still_running(uow, job):
        result = Fired(run(RunStatus.SKIPPED, reason="overlap: the previous run has not finished"))
    elif job.worker_queue_id is None:  # a job's rules require one: only a row written otherwise lacks it
        result = Fired(run(RunStatus.FAILED, reason="the job has no worker queue"), gone=True)
    elif job.target.kind is TargetKind.WORKFLOW:
        start = StartRun(worker_queue_id=job.worker_queue_id, input=dict(payload or {}))
        try:
            advance = await begin_run(ports, uow, job.organization_id, job.target.id, start, principal=principal)
        except (NotFound, ValidationFailed, PolicyDenied) as exc:  # raised before anything is written
            result = Fired(run(RunStatus.FAILED, reason=exc.message), gone=_gone(exc))
        else:
            fired = run(RunStatus.FIRED, workflow_run_id=advance.run.id, reason=_failed_at_once(advance.run))
            result = Fired(fired, topics=frozenset(advance.topics), gone=fired.skipped_reason is not None)
    else:
        kind = TargetType.AGENT if job.target.kind is TargetKind.AGENT else TargetType.TEAM
        try:  # (a prompt that renders past its limit is a failed run, its reason naming the limit)
            command = ExecuteCommand(
                prompt=render_prompt(job.prompt, payload or {}), worker_queue_id=job.worker_queue_id
            )
            execution = await queue_execution(
                ports, uow, job.organization_id, kind, job.target.id, command, principal=principal
            )
        except (NotFound, ValidationFailed, PolicyDenied) as exc:  # raised before anything is written
            result = Fired(run(RunStatus.FAILED, reason=exc.message), gone=_gone(exc))
        else:
            result = Fired(run(RunStatus.FIRED, execution_id=execution.id), execution)
    return result


async def _still_running(uow: UnitOfWork, job: Job) -> bool:
    """Whether the job's last run that created something (an execution, or a workflow run) has not ended."""
    last = await uow.jobs.last_fired_run(job.organization_id, job.id)
    if last is None:
        return False
    if last.workflow_run_id is not None:
        workflow_run = await uow.workflow_runs.get(job.organization_id, last.workflow_run_id)
        return workflow_run is not None and not workflow_run.is_terminal
    if last.execution_id is None:
        return False
    execution = await uow.executions.get(job.organization_id, last.execution_id)
    return execution is not None and not execution.is_terminal


@retry_transient
async def trigger_job(
    ports: Ports, organization_id: str, job_id: str, payload: dict[str, Any] | None, *, principal: Principal | None
) -> JobRun:
    """`POST /api/v1/jobs/{job_id}/trigger`: fire now, whatever the job's trigger (a disabled job too), in one of
    the organization's advance slots (`Ports.advancing`)."""
    async with ports.advancing(organization_id), ports.uow() as uow:
        job = await require_job(uow, organization_id, job_id, lock=True)
        fired = await fire(ports, uow, job, TriggerType.MANUAL, payload=payload, principal=principal)
        await uow.commit()
    await announce_fired(ports, fired)
    return fired.run


@dataclass(frozen=True, slots=True)
class DueRound:
    """What one round of the scheduler did: how many due firings it read and fired, and whether it may have left
    some unread (the next round then follows at once)."""

    read: int
    fired: int
    more: bool


async def fire_due_jobs(ports: Ports) -> int:
    """One round of the scheduler (`fire_due_round`): how many firings this node fired."""
    return (await fire_due_round(ports)).fired


async def fire_due_round(ports: Ports) -> DueRound:
    """The scheduler's round (every node runs it): each due cron firing, claimed by moving the job's `next_run_at`
    (compare-and-set) in the transaction that records the run and creates the execution.

    Fair between organizations: the round reads the due firings in turns (`fairness.in_turns`: every
    organization's earliest first, at most DUE_PER_ORGANIZATION of one), so that one organization's thousand due
    firings delay another's by at most one firing of each organization read before it.

    The due firings go FIRE_BATCH to a transaction (one commit, one wake-up of each queue): 1,000 jobs due in the
    same minute, fired one transaction each, took far longer (docs/benchmarks.md, "Jobs"). A batch whose transaction
    fails is fired again one job a transaction, so that one bad firing holds back no other."""
    now = ports.clock.now()
    async with ports.read() as uow:
        due = await uow.jobs.due(now, DUE_BATCH, per_organization=DUE_PER_ORGANIZATION)
    claimed = 0
    for start in range(0, len(due), FIRE_BATCH):
        batch = due[start : start + FIRE_BATCH]
        try:
            claimed += await fire_due_batch(ports, batch, now)
        except DomainError:
            for job in batch:
                claimed += await fire_due(ports, job, now)
    organizations = (job.organization_id for job in due)
    more = claimed > 0 and more_due(organizations, limit=DUE_BATCH, per_organization=DUE_PER_ORGANIZATION)
    return DueRound(len(due), claimed, more)


@retry_transient
async def fire_due_batch(ports: Ports, due: Sequence[Job], now: datetime) -> int:
    """Fire each job of `due` (as read) unless another node did, in one transaction: every firing missed
    collapses into this one; `misfire` says whether it runs (`fire_once`) or is recorded as skipped (`skip`) when
    it is later than the grace. How many this node claimed."""
    read = [job for job in due if job.next_run_at is not None]
    fired: list[Fired] = []
    async with ports.uow() as uow:
        # the rows as they are now (a PATCH made meanwhile is honoured), locked by the claim
        claimed = {job.id: job for job in await uow.jobs.claim([(job, next_run(ports, job, now)) for job in read])}
        for job in read:
            if (current := claimed.get(job.id)) is not None:
                fired.append(await _fire_claimed(ports, uow, current, job.next_run_at, now))
        await uow.jobs.add_run(*(each.run for each in fired))
        announced = await jobs_fired(ports, uow, [each.run for each in fired])
        await uow.commit()
    await announce_fired(ports, *fired)
    if announced:
        await publish(ports, DUE)
    return len(fired)


async def fire_due(ports: Ports, job: Job, now: datetime) -> bool:
    """Fire `job`'s due firing unless another node did, in a transaction of its own."""
    return await fire_due_batch(ports, [job], now) == 1


async def _fire_claimed(ports: Ports, uow: UnitOfWork, job: Job, scheduled: datetime | None, now: datetime) -> Fired:
    assert scheduled is not None
    if now - scheduled > MISFIRE_GRACE and job.misfire is Misfire.SKIP:
        reason = f"misfire: due at {scheduled.isoformat()}, no scheduler was running"
        return Fired(_skipped(ports, job, scheduled, now, reason))
    return await fire(ports, uow, job, TriggerType.CRON, scheduled_for=scheduled, record=False)


def _skipped(ports: Ports, job: Job, scheduled: datetime, now: datetime, reason: str) -> JobRun:
    return JobRun(
        id=ports.ids.new_id(), organization_id=job.organization_id, job_id=job.id, trigger=TriggerType.CRON,
        fired_at=now, scheduled_for=scheduled, status=RunStatus.SKIPPED, skipped_reason=reason, created_at=now,
    )  # fmt: skip
