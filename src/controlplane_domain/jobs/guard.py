"""The policies' gate for jobs: `job.create` and `job.fire` are guarded actions (docs/orchestration.md,
docs/policies.md). Every job use case calls `guard` at the right place: before the job is stored, before a firing
writes anything."""

from __future__ import annotations

import enum
from typing import Any

from controlplane_domain.jobs.entity import Job
from controlplane_domain.policies.entity import Action, Resource
from controlplane_domain.policies.gate import guard as policy_guard
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.principal import Principal


class JobAction(enum.StrEnum):
    CREATE = "job.create"
    FIRE = "job.fire"


def job_resource(job: Job) -> Resource:
    return Resource(
        "job",
        job.id,
        {
            "name": job.name,
            "enabled": job.enabled,
            "trigger": {"type": job.trigger.type.value, "cron": job.trigger.cron, "timezone": job.trigger.timezone},
            "target": {"kind": job.target.kind.value, "id": job.target.id},
            "worker_queue_id": job.worker_queue_id,
        },
    )


async def guard(
    ports: Ports,
    action: JobAction,
    job: Job,
    *,
    principal: Principal | None,
    request: dict[str, Any] | None = None,
    uow: UnitOfWork | None = None,
) -> None:
    """Whether `principal` (None for the scheduler and a webhook's sender) may perform `action` on `job`:
    PolicyDenied when an enforcing policy says no. `request`: what the firing or the creation asks for (the job's
    own fields when not given)."""
    resource = job_resource(job)
    asked = request if request is not None else {**resource.attributes, "prompt": job.prompt}
    await policy_guard(ports, Action(action.value), job.organization_id, principal, resource, asked, uow=uow)
