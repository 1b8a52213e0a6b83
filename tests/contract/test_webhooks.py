"""Webhooks on every store: the outbox written in the change's transaction (or not at all), deliveries claimed by
one dispatcher at a time and in order per webhook, the back-off schedule and the give-up after 24 hours, and the
auto-disable after 3 days of failures, with a clock the tests move and a scripted receiver."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.secrets.cipher import AesGcmCipher
from controlplane_domain.paging import Order, PageRequest
from controlplane_domain.ports import Ports
from controlplane_domain.webhooks import usecases as webhooks
from controlplane_domain.webhooks.delivery import claim, deliver_due
from controlplane_domain.webhooks.entity import DeliveryStatus, backoff
from controlplane_domain.webhooks.events import emit, prepare
from controlplane_domain.webhooks.ports import Outcome
from tests.contract.conftest import UowFactory

ORG = "org-a"
EVERYTHING = PageRequest(limit=200, offset=0, order=Order.DESC)  # newest first, as the HTTP list by default
START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@dataclass
class ScriptedReceiver:
    """The network's side of the sender: answers `status` (or the next of `answers`) and records each delivery."""

    status: int = 200
    answers: list[int] = field(default_factory=list)
    sent: list[tuple[str, str, str]] = field(default_factory=list)  # (url, webhook-id, event type)

    async def check(self, url: str) -> str | None:
        return None

    async def send(self, url: str, message_id: str, timestamp: datetime, payload: str, secret: str) -> Outcome:
        assert secret.startswith("whsec_")
        self.sent.append((url, message_id, json.loads(payload)["type"]))
        await asyncio.sleep(0)  # (another dispatcher may run meanwhile)
        code = self.answers.pop(0) if self.answers else self.status
        return Outcome(code, 3, None if 200 <= code < 300 else f"the receiver answered {code}")

    def new_secret(self) -> str:
        return "whsec_" + base64.b64encode(os.urandom(32)).decode()


def ports_on(uow: UowFactory, clock: ManualClock, receiver: ScriptedReceiver) -> Ports:
    cipher = AesGcmCipher(b"k" * 32)
    return Ports(uow=uow, clock=clock, ids=UuidGenerator(), secrets_cipher=cipher, webhook_sender=receiver)


async def hook(ports: Ports, url: str, *events: str, enabled: bool = True, org: str = ORG) -> str:
    command = webhooks.CreateWebhook(url=url, events=events, enabled=enabled)
    return (await webhooks.create_webhook(ports, org, command)).webhook.id


async def event(ports: Ports, event_type: str, org: str = ORG, **data: object) -> None:
    async with ports.uow() as uow:
        await emit(ports, uow, org, event_type, dict(data), ports.clock.now())
        await uow.commit()


async def deliveries(ports: Ports, webhook_id: str, org: str = ORG) -> list[webhooks.Delivery]:
    return (await webhooks.list_deliveries(ports, org, webhook_id, EVERYTHING)).items


async def test_an_event_is_written_with_its_change_for_the_webhooks_listening(uow: UowFactory) -> None:
    receiver = ScriptedReceiver()
    ports = ports_on(uow, ManualClock(START), receiver)
    completed = await hook(ports, "https://a.example/1", "execution.completed")
    every = await hook(ports, "https://a.example/2", "*")
    other_type = await hook(ports, "https://a.example/3", "job.fired")
    disabled = await hook(ports, "https://a.example/4", "*", enabled=False)
    elsewhere = await hook(ports, "https://b.example/5", "*", org="org-b")

    async with ports.uow() as unit:  # the change's transaction rolls back: no event either
        assert await emit(ports, unit, ORG, "execution.completed", {"id": "x"}, START)
    assert [await deliveries(ports, each) for each in (completed, every)] == [[], []]

    await event(ports, "execution.completed", id="x")
    (first,), (second,) = await deliveries(ports, completed), await deliveries(ports, every)
    assert first.message_id == second.message_id  # one event, one webhook-id, for each webhook
    assert first.status is DeliveryStatus.PENDING
    assert first.attempts == 0
    assert first.next_attempt_at == START
    assert json.loads(first.payload) == {"type": "execution.completed", "timestamp": "2026-03-01T12:00:00Z",
                                         "data": {"id": "x"}}  # fmt: skip
    assert await deliveries(ports, other_type) == []
    assert await deliveries(ports, disabled) == []
    assert await deliveries(ports, elsewhere, org="org-b") == []
    async with ports.read() as unit:
        assert await unit.webhooks.listened(ORG) == {"execution.completed", "*", "job.fired"}


async def test_each_delivery_is_sent_once_across_dispatchers_and_in_order_per_webhook(uow: UowFactory) -> None:
    receiver = ScriptedReceiver()
    clock = ManualClock(START)
    ports = ports_on(uow, clock, receiver)
    first, second = await hook(ports, "https://a.example/1", "*"), await hook(ports, "https://a.example/2", "*")
    for number in range(6):
        await event(ports, "job.fired" if number % 2 else "error", number=number)
    written = {each: [d.message_id for d in reversed(await deliveries(ports, each))] for each in (first, second)}

    heads = await asyncio.gather(*(claim(ports) for _ in range(3)))  # three nodes' claims at once
    claimed = [delivery for batch in heads for delivery, _ in batch]
    assert sorted(d.message_id for d in claimed) == sorted(ids[0] for ids in written.values())  # each head once

    async def pending() -> bool:
        found = [*await deliveries(ports, first), *await deliveries(ports, second)]
        return any(d.status is DeliveryStatus.PENDING for d in found)

    async def dispatcher() -> None:
        while await pending():
            if not await deliver_due(ports, jitter=lambda: 0.0):
                await asyncio.sleep(0.001)  # another dispatcher holds what is left: let it run

    clock.advance(61)  # the leases taken above run out: the heads are claimed again
    await asyncio.gather(*(dispatcher() for _ in range(3)))
    for each, url in ((first, "https://a.example/1"), (second, "https://a.example/2")):
        assert [message for to, message, _ in receiver.sent if to == url] == written[each]  # once each, in order
        assert all(d.status is DeliveryStatus.SUCCEEDED and d.attempts == 1 for d in await deliveries(ports, each))


async def test_a_failing_delivery_is_retried_with_backoff_for_24_hours_and_holds_back_the_next(uow: UowFactory) -> None:
    receiver = ScriptedReceiver(status=503)
    clock = ManualClock(START)
    ports = ports_on(uow, clock, receiver)
    webhook_id = await hook(ports, "https://a.example/1", "*")
    await event(ports, "error", number=1)
    await event(ports, "error", number=2)
    later, failing = await deliveries(ports, webhook_id)

    jitters = iter([0.0, 1.0, 0.5])
    assert await deliver_due(ports, jitter=lambda: next(jitters)) == 1
    (_, now_failing) = await deliveries(ports, webhook_id)
    assert (now_failing.id, now_failing.status, now_failing.attempts) == (failing.id, DeliveryStatus.PENDING, 1)
    assert now_failing.response_code == 503
    assert now_failing.last_error == "the receiver answered 503"
    assert now_failing.next_attempt_at == START + timedelta(seconds=2.5)  # 5 s, its random half at 0
    assert await deliver_due(ports, jitter=lambda: 0.0) == 0  # not due yet, and the next waits for it
    clock.advance(2.5)
    assert await deliver_due(ports, jitter=lambda: next(jitters)) == 1
    assert (await deliveries(ports, webhook_id))[1].next_attempt_at == clock.now() + timedelta(seconds=10)  # 10 s

    waits = []
    while (current := (await deliveries(ports, webhook_id))[1]).status is DeliveryStatus.PENDING:
        waits.append(current.next_attempt_at - clock.now())
        clock.advance((current.next_attempt_at - clock.now()).total_seconds())
        assert await deliver_due(ports, jitter=lambda: 0.5) == 1
    assert max(waits) <= backoff(100, 1.0) == timedelta(hours=1)
    assert current.status is DeliveryStatus.FAILED
    assert clock.now() == START + timedelta(hours=24)
    assert current.attempts == len(waits) + 2
    assert current.last_attempt_at == START + timedelta(hours=24)
    assert [message for _, message, _ in receiver.sent] == [failing.message_id] * current.attempts  # not the next
    receiver.status = 200
    assert await deliver_due(ports, jitter=lambda: 0.0) == 1  # now its turn
    assert (await deliveries(ports, webhook_id))[0].status is DeliveryStatus.SUCCEEDED
    assert receiver.sent[-1][1] == later.message_id


async def test_a_webhook_failing_for_three_days_is_disabled_and_says_why(uow: UowFactory) -> None:
    receiver = ScriptedReceiver(answers=[500, 204], status=410)
    clock = ManualClock(START)
    ports = ports_on(uow, clock, receiver)
    webhook_id = await hook(ports, "https://a.example/1", "*")
    await event(ports, "error")
    await deliver_due(ports, jitter=lambda: 0.0)
    assert (await webhooks.get_webhook(ports, ORG, webhook_id)).webhook.failing_since == START
    clock.advance(2.5)
    await deliver_due(ports, jitter=lambda: 0.0)  # a success ends the run of failures
    assert (await webhooks.get_webhook(ports, ORG, webhook_id)).webhook.failing_since is None

    began = clock.now()
    for number in range(4):  # each given up after 24 hours; a new one is then due
        await event(ports, "error", number=number)
    while (await webhooks.get_webhook(ports, ORG, webhook_id)).webhook.enabled:
        pending = [d for d in await deliveries(ports, webhook_id) if d.status is DeliveryStatus.PENDING]
        head = pending[-1]  # the oldest (the log is newest first): the others wait for it
        clock.advance(max(0.0, (head.next_attempt_at - clock.now()).total_seconds()))
        assert await deliver_due(ports, jitter=lambda: 1.0) == 1
    disabled = (await webhooks.get_webhook(ports, ORG, webhook_id)).webhook
    assert clock.now() - began >= timedelta(days=3)
    assert clock.now() - began < timedelta(days=3, hours=1)
    assert disabled.disabled_reason is not None
    assert "failed since" in disabled.disabled_reason
    assert "410" in disabled.disabled_reason
    statuses = [d.status for d in await deliveries(ports, webhook_id)]
    assert statuses.count(DeliveryStatus.FAILED) == 3
    assert statuses.count(DeliveryStatus.PENDING) == 1
    clock.advance(86_400)
    assert await deliver_due(ports, jitter=lambda: 0.0) == 0  # a disabled webhook's deliveries wait
    await event(ports, "error")  # and no new event is written for it
    assert len(await deliveries(ports, webhook_id)) == 5

    enabled = await webhooks.update_webhook(ports, ORG, webhook_id, webhooks.UpdateWebhook(enabled=True))
    assert enabled.webhook.disabled_reason is None
    assert enabled.webhook.failing_since is None
    receiver.status = 200
    assert await deliver_due(ports, jitter=lambda: 0.0) == 1  # what waited goes out again


async def test_a_worker_that_falls_silent_is_marked_offline_once_across_nodes_and_says_so(uow: UowFactory) -> None:
    from controlplane_domain.workers.entity import WorkerStatus
    from controlplane_domain.workers.usecases import (
        RecordHeartbeat,
        list_workers,
        mark_silent_workers,
        record_heartbeat,
    )

    clock = ManualClock(START)
    ports = ports_on(uow, clock, ScriptedReceiver())
    listening = await hook(ports, "https://a.example/1", "worker.status_changed")
    for worker_id in ("quiet", "talking"):
        await record_heartbeat(ports, ORG, RecordHeartbeat(worker_id=worker_id, environment_name="prod"))
    interval = ports.worker_heartbeat_interval_seconds

    async def announced() -> list[tuple[str, str | None, str]]:
        found = reversed(await deliveries(ports, listening))
        return [
            (d["worker_id"], d["previous_status"], d["status"]) for d in (json.loads(x.payload)["data"] for x in found)
        ]

    assert await announced() == [("quiet", None, "active"), ("talking", None, "active")]  # registered
    clock.advance(interval * 3)  # three intervals exactly: not yet silent
    await record_heartbeat(ports, ORG, RecordHeartbeat(worker_id="talking", environment_name="prod"))
    assert await mark_silent_workers(ports) == 0
    clock.advance(1)
    assert await asyncio.gather(*(mark_silent_workers(ports) for _ in range(3))) in ([1, 0, 0], [0, 1, 0], [0, 0, 1])
    assert await mark_silent_workers(ports) == 0  # once
    assert (await announced())[2:] == [("quiet", "active", "offline")]
    stored = {w.worker_id: w.status for w in (await list_workers(ports, ORG, EVERYTHING)).items}
    assert stored == {"quiet": WorkerStatus.OFFLINE, "talking": WorkerStatus.ACTIVE}

    await record_heartbeat(ports, ORG, RecordHeartbeat(worker_id="quiet", environment_name="prod"))  # back
    assert (await announced())[3:] == [("quiet", "offline", "active")]
    assert await mark_silent_workers(ports) == 0


async def test_an_event_is_delivered_only_with_the_change_that_causes_it(uow: UowFactory) -> None:
    """A change's webhook events are written by the change itself (`record(..., outbox=...)`; on Postgres in its
    own statement): a change that does not happen (its compare-and-set fails) writes no delivery of its event, and
    one that happens writes it. Every store answers alike."""
    from controlplane_adapters.jobs.cron import CronsimCalendar
    from controlplane_domain.executions.entity import ExecutionStatus, TargetType
    from controlplane_domain.executions.execute import ExecuteCommand, execute
    from tests.contract.test_jobs import cron_job

    clock = ManualClock(START)
    ports = ports_on(uow, clock, ScriptedReceiver())
    ports = replace(ports, cron=CronsimCalendar())
    job = await cron_job(ports, "0 * * * *")  # (an agent and a queue)
    listening = await hook(ports, "https://a.example/1", "execution.failed")
    assert job.job.worker_queue_id is not None
    queued = await execute(
        ports,
        ORG,
        TargetType.AGENT,
        job.job.target.id,
        ExecuteCommand(prompt="go", worker_queue_id=job.job.worker_queue_id),
    )
    stale = replace(queued, last_seq=queued.last_seq + 1)  # as if read after a change this one did not see
    async with ports.uow() as unit:
        event = await prepare(ports, unit, ORG, "execution.failed", {"id": queued.id}, clock.now())
        assert event is not None
        ended = stale.transition(ExecutionStatus.FAILED, clock.now(), error="boom")
        assert not await unit.executions.record(stale, ended, [], outbox=[event])
        await unit.commit()
    assert await deliveries(ports, listening) == []
    async with ports.uow() as unit:
        event = await prepare(ports, unit, ORG, "execution.failed", {"id": queued.id}, clock.now())
        assert event is not None
        ended = queued.transition(ExecutionStatus.FAILED, clock.now(), error="boom")
        assert await unit.executions.record(queued, ended, [], outbox=[event])
        await unit.commit()
    (delivered,) = await deliveries(ports, listening)
    assert (delivered.event_type, json.loads(delivered.payload)["data"]) == ("execution.failed", {"id": queued.id})


async def test_a_claim_leases_at_most_an_organizations_share_fair_shares_first(uow: UowFactory) -> None:
    clock = ManualClock(START)
    ports = ports_on(uow, clock, ScriptedReceiver())
    busy = [await hook(ports, f"https://a.example/{number}", "*") for number in range(5)]  # org-a: five webhooks
    await event(ports, "error", number=1)  # due first: org-a's five deliveries are the oldest
    clock.advance(1)
    quiet = await hook(ports, "https://b.example/1", "*", org="org-b")
    await event(ports, "error", org="org-b", number=2)
    clock.advance(1)

    first = await claim(ports, limit=3, per_organization=2)  # fair shares: org-a's first, org-b's, org-a's second
    assert sorted(d.organization_id for d, _ in first) == ["org-a", "org-a", "org-b"]
    assert await claim(ports, limit=10, per_organization=2) == []  # org-a holds its two; org-b's one is leased
    settled = next(d for d, w in first if d.organization_id == "org-a")
    assert await webhooks_settle(ports, settled)
    again = await claim(ports, limit=10, per_organization=2)  # a slot of org-a's share is free again
    assert [(d.organization_id, d.webhook_id in busy) for d, _ in again] == [("org-a", True)]
    assert quiet not in {d.webhook_id for d, _ in again}
    uncapped = await claim(ports, limit=10, per_organization=None)
    assert [d.organization_id for d, _ in uncapped] == ["org-a", "org-a"]  # the rest of org-a's


async def webhooks_settle(ports: Ports, delivery: webhooks.Delivery) -> bool:
    """Release a leased delivery as sent (succeeded), as the dispatcher would."""
    done = replace(delivery, status=DeliveryStatus.SUCCEEDED, attempts=1, lease_until=None, lease_token=None)
    async with ports.uow() as unit:
        written = await unit.webhooks.settle(done, delivery.lease_token or "")
        await unit.commit()
    return written
