"""Jobs: create, list, get, patch, delete, rotate a webhook job's secret, trigger by hand, list runs; and the public
webhook route that fires a webhook job (authenticated by its Standard Webhooks signature, not a bearer)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, post
from litestar.exceptions import HTTPException
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.errors import ValidationFailed
from controlplane_domain.jobs import firing, usecases, webhook_trigger
from controlplane_domain.jobs.entity import JobRun as DomainRun
from controlplane_domain.jobs.entity import Target, TargetKind, Trigger, TriggerType
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, routes
from controlplane_http.handlers import PUBLIC_URL_KEY, caller, errors
from controlplane_http.skills.controller import OptionalBody
from controlplane_wire.base import to_wire
from controlplane_wire.configuration import given_fields
from controlplane_wire.jobs import (
    CronTrigger,
    Job,
    JobCreate,
    JobList,
    JobRun,
    JobRunList,
    JobTarget,
    JobTrigger,
    JobUpdate,
    ManualTrigger,
    TriggerRequest,
    WebhookTrigger,
)

WEBHOOK_PATH = "/api/v1/webhooks/jobs"


def trigger_in(trigger: JobTrigger) -> Trigger:
    if isinstance(trigger, CronTrigger):
        return Trigger(TriggerType.CRON, trigger.cron, trigger.timezone)
    return Trigger(TriggerType.WEBHOOK if isinstance(trigger, WebhookTrigger) else TriggerType.MANUAL)


def target_in(target: JobTarget) -> Target:
    given = [(kind, value) for kind, value in ((TargetKind.AGENT, target.agent_id), (TargetKind.TEAM, target.team_id),
             (TargetKind.WORKFLOW, target.workflow_id)) if value is not None]  # fmt: skip
    if len(given) != 1:
        raise ValidationFailed("target", "must name exactly one of agent_id, team_id, workflow_id")
    kind, value = given[0]
    return Target(kind, value.lower())


def _trigger_out(trigger: Trigger) -> JobTrigger:
    if trigger.type is TriggerType.CRON:
        return CronTrigger(cron=trigger.cron or "", timezone=trigger.timezone or "UTC")
    return WebhookTrigger() if trigger.type is TriggerType.WEBHOOK else ManualTrigger()


def _base_url(scope: Scope) -> str:
    """The configured public URL (`CONTROLPLANE_PUBLIC_URL`), never the request's `Host`: a caller choosing the
    header must not choose where the answer tells others to send a job's webhooks."""
    base: str = scope["app"].state[PUBLIC_URL_KEY]
    return base


def job_out(view: usecases.JobView, scope: Scope) -> Job:
    job = view.job
    webhook = job.trigger.type is TriggerType.WEBHOOK
    return Job(
        id=job.id,
        organization_id=job.organization_id,
        name=job.name,
        enabled=job.enabled,
        trigger=_trigger_out(job.trigger),
        target=JobTarget(**{f"{job.target.kind}_id": job.target.id}),
        prompt=job.prompt,
        worker_queue_id=job.worker_queue_id,
        overlap=job.overlap,
        misfire=job.misfire,
        next_run_at=job.next_run_at,
        webhook_url=f"{_base_url(scope)}{WEBHOOK_PATH}/{job.id}" if webhook else None,
        webhook_secret=view.secret,
        created_at=job.created_at,
        updated_at=job.updated_at,
    )


def run_out(run: DomainRun) -> JobRun:
    return to_wire(run, JobRun)


def _create(data: JobCreate) -> usecases.CreateJob:
    return usecases.CreateJob(
        name=data.name, trigger=trigger_in(data.trigger), target=target_in(data.target), prompt=data.prompt,
        worker_queue_id=data.worker_queue_id and data.worker_queue_id.lower(), enabled=data.enabled,
        overlap=data.overlap, misfire=data.misfire,
    )  # fmt: skip


def _update(data: JobUpdate) -> usecases.UpdateJob:
    fields: dict[str, Any] = given_fields(data)
    if "trigger" in fields:
        fields["trigger"] = trigger_in(data.trigger)  # type: ignore[arg-type]
    if "target" in fields:
        fields["target"] = target_in(data.target)  # type: ignore[arg-type]
    if isinstance(fields.get("worker_queue_id"), str):
        fields["worker_queue_id"] = fields["worker_queue_id"].lower()
    return usecases.UpdateJob(**fields)


@routes(
    Resource("job", "Job", Job, JobList, job_out, scoped=True),
    Create(usecases.create_job, body=JobCreate, command=_create, codes=(409, 415, 503), principal=True),
    Listing(usecases.list_jobs, named=True),
    Read(usecases.get_job),
    Update(usecases.update_job, body=JobUpdate, command=_update, codes=(404, 409, 415, 503)),
    Remove(usecases.delete_job, force=False, codes=(404,)),
)
@routes(
    Resource("run", "JobRun", JobRun, JobRunList, run_out),
    Listing(usecases.list_runs, under="job_id", history=True, codes=(404,)),
)
class JobController(Controller):
    path = "/api/v1/jobs"
    tags = ["jobs"]

    @post(
        "/{job_id:str}/rotate-secret", operation_id="rotateJobSecret", status_code=200, responses=errors(404, 409, 503)
    )
    async def rotate_secret(self, job_id: FromPath[str], scope: Scope) -> Job:
        ports, principal = caller(scope)
        return job_out(await usecases.rotate_secret(ports, principal.organization_id, job_id), scope)

    @post(
        "/{job_id:str}/trigger",
        operation_id="triggerJob",
        status_code=201,
        responses=errors(404, 415),
        operation_class=OptionalBody,
    )
    async def trigger_job(
        self, job_id: FromPath[str], scope: Scope, data: JSONBody[TriggerRequest | None] = None
    ) -> JobRun:
        ports, principal = caller(scope)
        payload = None if data is None else data.payload
        run = await firing.trigger_job(ports, principal.organization_id, job_id, payload, principal=principal)
        return run_out(run)


class JobWebhookController(Controller):
    """Public: no bearer. The Standard Webhooks headers sign the body with the job's secret (401 otherwise)."""

    path = WEBHOOK_PATH
    tags = ["jobs"]
    security = [{}]

    @post(
        "/{job_id:str}",
        operation_id="receiveJobWebhook",
        status_code=201,
        responses=errors(404, 409, 413, 429, 503),
        description="Fires a webhook job. 201 with the new run; 200 with the first run for a repeated webhook-id.",
    )
    async def receive(self, job_id: FromPath[str], request: Request[Any, Any, Any]) -> Response[JobRun]:
        body = await request.body()
        if len(body) > webhook_trigger.WEBHOOK_BODY_MAX_BYTES:
            raise HTTPException(
                status_code=413, detail=f"webhook body over {webhook_trigger.WEBHOOK_BODY_MAX_BYTES} bytes"
            )
        ports = request.app.state["ports"]
        headers = {name: request.headers.get(name, "") for name in webhook_trigger.WEBHOOK_HEADERS}
        answer = await webhook_trigger.receive_webhook(ports, job_id, body, headers)
        return Response(run_out(answer.run), status_code=200 if answer.repeated else 201)


AREA = HttpArea((JobController, JobWebhookController), visible={"job_id": usecases.get_job})
