"""Job use cases: create, read, change, delete, rotate a webhook job's secret, list its runs."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from controlplane_domain import crud
from controlplane_domain.crud import Area
from controlplane_domain.errors import Conflict, ValidationFailed
from controlplane_domain.executions.entity import PROMPT_MAX_LENGTH
from controlplane_domain.jobs.entity import (
    Job,
    JobRun,
    Misfire,
    Overlap,
    Target,
    TargetKind,
    Trigger,
    TriggerType,
    secret_data,
)
from controlplane_domain.jobs.guard import JobAction, guard
from controlplane_domain.jobs.ports import CronCalendar, WebhookSignatures
from controlplane_domain.names import check_name, is_uuid
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset, pick
from controlplane_domain.ports import Ports, UnitOfWork, wired
from controlplane_domain.principal import Principal
from controlplane_domain.retry import retry_transient
from controlplane_domain.secrets.entity import SealedValue
from controlplane_domain.secrets.usecases import require_cipher


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateJob:
    name: str
    trigger: Trigger
    target: Target
    prompt: str
    worker_queue_id: str | None = None
    enabled: bool = True
    overlap: Overlap = Overlap.ALLOW
    misfire: Misfire = Misfire.FIRE_ONCE


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateJob:
    name: str | Unset = UNSET
    enabled: bool | Unset = UNSET
    trigger: Trigger | Unset = UNSET
    target: Target | Unset = UNSET
    prompt: str | Unset = UNSET
    worker_queue_id: str | Unset | None = UNSET
    overlap: Overlap | Unset = UNSET
    misfire: Misfire | Unset = UNSET


@dataclass(frozen=True, slots=True)
class JobView:
    """A job as answered; `secret` is the webhook signing secret, only when it was just made."""

    job: Job
    secret: str | None = None


def calendar(ports: Ports) -> CronCalendar:
    return wired(ports.cron, "no cron calendar is wired (Ports.cron)")


def signatures(ports: Ports) -> WebhookSignatures:
    return wired(ports.signatures, "no webhook signatures are wired (Ports.signatures)")


def next_run(ports: Ports, job: Job, after: datetime) -> datetime | None:
    """When an enabled cron job fires next after `after`; None for other jobs."""
    trigger = job.trigger
    if not job.enabled or trigger.type is not TriggerType.CRON or trigger.cron is None:
        return None
    return calendar(ports).next_after(trigger.cron, trigger.timezone or "UTC", after)


def _check_trigger(ports: Ports, trigger: Trigger) -> None:
    if trigger.type is TriggerType.CRON:
        if trigger.cron is None:
            raise ValidationFailed("trigger.cron", "is required for a cron trigger")
        problem = calendar(ports).problem(trigger.cron, trigger.timezone or "UTC")
        if problem is not None:
            raise ValidationFailed(f"trigger.{problem[0]}", problem[1])
    elif trigger.cron is not None or trigger.timezone is not None:
        raise ValidationFailed("trigger.cron", f"only a cron trigger has a schedule, not a {trigger.type} one")


async def _check_job(ports: Ports, uow: UnitOfWork, job: Job, was: Job | None = None) -> None:
    """The job's rules; on a change (`was`: the job before it), its target and queue are checked only when they
    change, so that a job whose target or queue is gone can still be disabled, renamed or pointed elsewhere."""
    check_name("name", job.name)
    if not job.prompt.strip():
        raise ValidationFailed("prompt", "must not be blank")
    if len(job.prompt) > PROMPT_MAX_LENGTH:
        raise ValidationFailed("prompt", f"must be at most {PROMPT_MAX_LENGTH} characters")
    _check_trigger(ports, job.trigger)
    if was is None or job.target != was.target:
        await _check_target(uow, job)
    if job.worker_queue_id is None:
        raise ValidationFailed("worker_queue_id", f"is required (the queue the {job.target.kind} runs on)")
    if was is not None and job.worker_queue_id == was.worker_queue_id:
        return
    if not is_uuid(job.worker_queue_id) or await uow.queues.get(job.organization_id, job.worker_queue_id) is None:
        raise ValidationFailed("worker_queue_id", "no worker queue of this organization has this id")


async def _check_target(uow: UnitOfWork, job: Job) -> None:
    target, org = job.target, job.organization_id
    field = f"target.{target.kind}_id"
    if not is_uuid(target.id):
        raise ValidationFailed(field, "must be a UUID")
    if target.kind is TargetKind.WORKFLOW:
        found: object | None = await uow.workflows.get(org, target.id)
    elif target.kind is TargetKind.AGENT:
        found = await uow.agents.get(org, target.id)
    else:
        found = await uow.teams.get(org, target.id)
    if found is None:
        raise ValidationFailed(field, f"no {target.kind} of this organization has this id")


def _new_secret(ports: Ports, job: Job) -> tuple[str, SealedValue]:
    cipher = require_cipher(ports)
    secret = signatures(ports).new_secret()
    return secret, SealedValue(cipher.key_id, cipher.encrypt(secret, secret_data(job.organization_id, job.id)))


JOBS = Area("job", lambda uow: uow.jobs)


async def require_job(uow: UnitOfWork, organization_id: str, job_id: str, *, lock: bool = False) -> Job:
    return await crud.require(JOBS, uow, organization_id, job_id, lock=lock)


@retry_transient
async def create_job(ports: Ports, organization_id: str, command: CreateJob, *, principal: Principal | None) -> JobView:
    job = crud.new(
        Job, ports, organization_id, command, trigger=_with_zone(command.trigger), next_run_at=None, secret=None
    )
    secret = None

    async def check(uow: UnitOfWork, job: Job) -> Job:
        nonlocal secret
        await _check_job(ports, uow, job)
        job = replace(job, next_run_at=next_run(ports, job, job.created_at))
        if job.trigger.type is TriggerType.WEBHOOK:
            secret, sealed = _new_secret(ports, job)
            job = replace(job, secret=sealed)
        await guard(ports, JobAction.CREATE, job, principal=principal, uow=uow)
        return job

    return JobView(await crud.add(JOBS, ports, job, check), secret)


def _with_zone(trigger: Trigger) -> Trigger:
    """A cron trigger without a time zone is in UTC."""
    if trigger.type is TriggerType.CRON and trigger.timezone is None:
        return replace(trigger, timezone="UTC")
    return trigger


async def get_job(ports: Ports, organization_id: str, job_id: str) -> JobView:
    return JobView(await crud.get(JOBS, ports, organization_id, job_id))


async def list_jobs(ports: Ports, organization_id: str, page: PageRequest) -> Page[JobView]:
    return (await crud.list_page(JOBS, ports, organization_id, page)).map(JobView)


@retry_transient
async def update_job(ports: Ports, organization_id: str, job_id: str, command: UpdateJob) -> JobView:
    secret: str | None = None

    async def change(uow: UnitOfWork, job: Job, now: datetime) -> Job:
        nonlocal secret
        updated = crud.patched(job, command, now, trigger=_with_zone(pick(command.trigger, job.trigger)))
        await _check_job(ports, uow, updated, job)
        if updated.trigger != job.trigger or updated.enabled != job.enabled:
            updated = replace(updated, next_run_at=next_run(ports, updated, now))
        if updated.trigger.type is not TriggerType.WEBHOOK:
            updated = replace(updated, secret=None)
        elif job.trigger.type is not TriggerType.WEBHOOK:  # it became a webhook job: its secret, shown this once
            secret, sealed = _new_secret(ports, updated)
            updated = replace(updated, secret=sealed)
        return updated

    return JobView(await crud.update_in(JOBS, ports, organization_id, job_id, change), secret)


@retry_transient
async def delete_job(ports: Ports, organization_id: str, job_id: str) -> None:
    """Delete the job and its runs; the executions it created stay."""
    await crud.delete(JOBS, ports, organization_id, job_id)


@retry_transient
async def rotate_secret(ports: Ports, organization_id: str, job_id: str) -> JobView:
    """A new signing secret for a webhook job (the old one stops verifying at once), shown this once."""
    async with ports.uow() as uow:
        job = await require_job(uow, organization_id, job_id, lock=True)
        if job.trigger.type is not TriggerType.WEBHOOK:
            raise Conflict("only a webhook job has a signing secret", {"field": "trigger.type"})
        secret, sealed = _new_secret(ports, job)
        job = replace(job, secret=sealed, updated_at=ports.clock.now())
        await uow.jobs.update(job)
        await uow.commit()
    return JobView(job, secret)


async def list_runs(ports: Ports, organization_id: str, job_id: str, page: PageRequest) -> Page[JobRun]:
    async with ports.read() as uow:
        await require_job(uow, organization_id, job_id)
        items, total = await uow.jobs.run_page(organization_id, job_id, page)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)
