"""`controlplane secrets rotate-key`'s part for signing secrets, on every store: after a rotation the webhooks sign
with, and the webhook jobs verify with, the very secrets shown when they were made, under the new key alone."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import pytest

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.jobs.trigger_signatures import sign
from controlplane_adapters.secrets.cipher import AesGcmCipher
from controlplane_domain.jobs import usecases as jobs
from controlplane_domain.jobs.entity import Trigger, TriggerType
from controlplane_domain.jobs.signing import rotate_signing_keys as rotate_jobs
from controlplane_domain.jobs.webhook_trigger import receive_webhook
from controlplane_domain.secrets.entity import SecretUnreadable
from controlplane_domain.webhooks.delivery import deliver_due
from controlplane_domain.webhooks.ports import Outcome
from controlplane_domain.webhooks.signing import rotate_signing_keys as rotate_webhooks
from tests.contract import test_jobs
from tests.contract.conftest import UowFactory
from tests.contract.test_webhooks import ORG, ScriptedReceiver, event, hook

OLD, NEW = AesGcmCipher(b"o" * 32), AesGcmCipher(b"n" * 32)


@dataclass
class Recording(ScriptedReceiver):
    secrets: list[str] = field(default_factory=list)  # the secret each delivery was signed with

    async def send(self, url: str, message_id: str, timestamp: datetime, payload: str, secret: str) -> Outcome:
        self.secrets.append(secret)
        return await super().send(url, message_id, timestamp, payload, secret)


async def test_a_rotation_reseals_every_signing_secret_and_keeps_each_one(uow: UowFactory) -> None:
    clock = ManualClock(datetime(2026, 3, 1, 12, tzinfo=UTC))
    receiver = Recording()
    old_ports = replace(test_jobs.ports_on(uow, clock), secrets_cipher=OLD, webhook_sender=receiver)
    hooks = [await hook(old_ports, f"https://a.example/{n}", "*") for n in range(3)]
    shown: dict[str, str] = {}
    async with old_ports.read() as unit:
        for webhook_id in hooks:
            found = await unit.webhooks.get(ORG, webhook_id)
            assert found is not None
            shown[webhook_id] = OLD.decrypt(found.secret.data, json.dumps(["webhook", ORG, webhook_id]).encode())
    cron = await test_jobs.cron_job(old_ports, "0 * * * *", name="cron")  # no signing secret: left alone
    agent_target = cron.job.target
    command = jobs.CreateJob(name="push", trigger=Trigger(TriggerType.WEBHOOK), target=agent_target, prompt="go",
                             worker_queue_id=cron.job.worker_queue_id)  # fmt: skip
    job = await jobs.create_job(old_ports, ORG, command, principal=None)
    assert job.secret is not None

    assert await rotate_webhooks(old_ports.uow, OLD, NEW, batch=2) == 3
    assert await rotate_jobs(old_ports.uow, OLD, NEW, batch=2) == 1
    assert (await rotate_webhooks(old_ports.uow, OLD, NEW), await rotate_jobs(old_ports.uow, OLD, NEW)) == (0, 0)
    for rotate in (rotate_webhooks, rotate_jobs):  # a third key finds secrets neither it nor `old` sealed
        with pytest.raises(SecretUnreadable):
            await rotate(old_ports.uow, AesGcmCipher(b"x" * 32), AesGcmCipher(b"y" * 32))

    new_ports = replace(old_ports, secrets_cipher=NEW)
    await event(new_ports, "webhook.test", message="after the rotation")
    while await deliver_due(new_ports, jitter=lambda: 0.0):
        pass
    assert sorted(receiver.secrets) == sorted(shown.values())  # each webhook signs with the secret it was given
    body = b'{"ref": "main"}'
    answer = await receive_webhook(new_ports, job.job.id, body, sign(job.secret, "msg_1", clock.now(), body))
    assert answer.run.execution_id is not None  # the job's sender's signature still verifies
