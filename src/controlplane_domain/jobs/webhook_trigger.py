"""A job's webhook trigger: a delivery signed with the job's secret (Standard Webhooks) fires it, once for each
`webhook-id`; a delivery seen before answers its first run again (firing.py fires)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from controlplane_domain.errors import Conflict, NotFound, Unauthenticated, ValidationFailed
from controlplane_domain.jobs.entity import (
    Job,
    JobRun,
    TriggerType,
    secret_data,
)
from controlplane_domain.jobs.firing import announce_fired, fire
from controlplane_domain.jobs.usecases import require_job, signatures
from controlplane_domain.ports import Ports
from controlplane_domain.retry import retry_transient
from controlplane_domain.secrets.usecases import require_cipher

WEBHOOK_BODY_MAX_BYTES = 256 * 1024
WEBHOOK_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")
WEBHOOK_ID_MAX_LENGTH = 255


@dataclass(frozen=True, slots=True)
class WebhookAnswer:
    run: JobRun
    repeated: bool


async def receive_webhook(ports: Ports, job_id: str, body: bytes, headers: dict[str, str]) -> WebhookAnswer:
    """`POST /api/v1/webhooks/jobs/{job_id}`: a signed delivery fires the job with its JSON body as `payload`; a
    delivery whose `webhook-id` the job has seen answers that first run again (and fires nothing)."""
    if len(body) > WEBHOOK_BODY_MAX_BYTES:
        raise ValidationFailed("body", f"must be at most {WEBHOOK_BODY_MAX_BYTES} bytes")
    async with ports.read() as uow:
        job = await uow.jobs.get_for_webhook(job_id)
    if job is None or job.trigger.type is not TriggerType.WEBHOOK or job.secret is None:
        raise NotFound("job", job_id)
    secret = require_cipher(ports).decrypt(job.secret.data, secret_data(job.organization_id, job.id))
    if not signatures(ports).verify(secret, body, headers, ports.clock.now()):
        raise Unauthenticated("invalid, missing or expired webhook signature")
    webhook_id = headers.get("webhook-id", "")
    if len(webhook_id) > WEBHOOK_ID_MAX_LENGTH:
        raise ValidationFailed("webhook-id", f"must be at most {WEBHOOK_ID_MAX_LENGTH} characters", "header")
    payload = _payload(body)
    if not job.enabled:
        raise Conflict("the job is disabled", {"field": "enabled"})
    return await _deliver(ports, job, payload, webhook_id)


def _payload(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body) if body.strip() else {}
    except ValueError:
        raise ValidationFailed("body", "must be a JSON object") from None
    if not isinstance(payload, dict):
        raise ValidationFailed("body", "must be a JSON object")
    return payload


@retry_transient
async def _deliver(ports: Ports, job: Job, payload: dict[str, Any], webhook_id: str) -> WebhookAnswer:
    async with ports.advancing(job.organization_id), ports.uow() as uow:
        current = await require_job(uow, job.organization_id, job.id, lock=True)  # deliveries of a job in turn
        first = await uow.jobs.run_for_webhook(job.organization_id, job.id, webhook_id)
        if first is not None:
            return WebhookAnswer(first, repeated=True)
        fired = await fire(ports, uow, current, TriggerType.WEBHOOK, payload=payload, webhook_id=webhook_id)
        await uow.commit()
    await announce_fired(ports, fired)
    return WebhookAnswer(fired.run, repeated=False)
