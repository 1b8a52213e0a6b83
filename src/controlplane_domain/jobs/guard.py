"""The policies' hook for jobs: `job.create` and `job.fire` are guarded actions (docs/orchestration.md).

The policies area is not built yet. When it is, `guard` asks its engine and raises Forbidden (`POLICY_DENIED`) on a
deny; every job use case already calls it at the right place (before the job is stored, before a firing writes)."""

from __future__ import annotations

import enum

from controlplane_domain.jobs.entity import Job
from controlplane_domain.ports import Ports


class JobAction(enum.StrEnum):
    CREATE = "job.create"
    FIRE = "job.fire"


async def guard(ports: Ports, action: JobAction, job: Job, *, subject: str | None) -> None:
    """Whether `subject` (None for the scheduler and a webhook's sender) may perform `action` on `job`: allowed
    until the policies area plugs its engine in here."""
    return
