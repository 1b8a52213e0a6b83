"""Jobs on every store: the repository, the scheduler's firings (each once, also with two nodes at once), misfires
after a stop, and cron times across daylight-saving changes, with a clock the tests move."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.jobs.cron import CronsimCalendar
from controlplane_adapters.jobs.trigger_signatures import StandardWebhooks
from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.agents import usecases as agents
from controlplane_domain.environments import usecases as environments
from controlplane_domain.errors import Conflict
from controlplane_domain.jobs import usecases as jobs
from controlplane_domain.jobs.entity import JobRun, Misfire, RunStatus, Target, TargetKind, Trigger, TriggerType
from controlplane_domain.jobs.firing import fire_due_jobs
from controlplane_domain.paging import Order, PageRequest
from controlplane_domain.ports import Ports
from tests.contract.conftest import UowFactory

ORG = "org-a"
EVERYTHING = PageRequest(limit=200, offset=0, order=Order.DESC)  # newest first, as the HTTP list by default
NEW_YORK = "America/New_York"


def ports_on(uow: UowFactory, clock: ManualClock) -> Ports:
    return Ports(uow=uow, clock=clock, ids=UuidGenerator(), cron=CronsimCalendar(), signatures=StandardWebhooks())


async def cron_job(
    ports: Ports, cron: str, timezone: str = "UTC", name: str = "job", **options: object
) -> jobs.JobView:
    agent = await agents.create_agent(ports, ORG, agents.CreateAgent(name=f"agent-{name}"))
    environment = await environments.create_environment(ports, ORG, environments.CreateEnvironment(name=f"e-{name}"))
    queue = await environments.create_queue(ports, ORG, environment.id, environments.CreateQueue(name=f"q-{name}"))
    command = jobs.CreateJob(
        name=name, trigger=Trigger(TriggerType.CRON, cron, timezone), target=Target(TargetKind.AGENT, agent.id),
        prompt="go", worker_queue_id=queue.queue.id, **options,  # type: ignore[arg-type]
    )  # fmt: skip
    return await jobs.create_job(ports, ORG, command, principal=None)


async def runs_of(ports: Ports, job_id: str) -> list[JobRun]:
    return list(reversed((await jobs.list_runs(ports, ORG, job_id, EVERYTHING)).items))


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


async def test_a_due_firing_fires_once_and_moves_next_run_at(uow: UowFactory) -> None:
    clock = ManualClock(at(2026, 1, 1))
    ports = ports_on(uow, clock)
    job = (await cron_job(ports, "*/10 * * * *")).job
    assert job.next_run_at == at(2026, 1, 1, 0, 10)
    assert await fire_due_jobs(ports) == 0
    clock.advance(10 * 60)
    assert await fire_due_jobs(ports) == 1
    assert await fire_due_jobs(ports) == 0
    (run,) = await runs_of(ports, job.id)
    assert (run.status, run.trigger, run.scheduled_for, run.fired_at) == (
        RunStatus.FIRED, TriggerType.CRON, at(2026, 1, 1, 0, 10), at(2026, 1, 1, 0, 10))  # fmt: skip
    assert run.execution_id is not None
    async with uow() as work:
        execution = await work.executions.get(ORG, run.execution_id)
    assert execution is not None
    assert execution.prompt == "go"
    assert (await jobs.get_job(ports, ORG, job.id)).job.next_run_at == at(2026, 1, 1, 0, 20)


async def test_two_nodes_on_one_store_fire_each_due_firing_once(uow: UowFactory) -> None:
    clock = ManualClock(at(2026, 1, 1))
    first, second = ports_on(uow, clock), ports_on(uow, clock)
    made = [(await cron_job(first, "* * * * *", name=f"j{n}")).job for n in range(5)]
    for _ in range(3):
        clock.advance(60)
        fired = await asyncio.gather(fire_due_jobs(first), fire_due_jobs(second))
        assert sum(fired) == 5
    for job in made:
        assert [run.scheduled_for for run in await runs_of(first, job.id)] == [
            at(2026, 1, 1, 0, 1), at(2026, 1, 1, 0, 2), at(2026, 1, 1, 0, 3)]  # fmt: skip


async def test_a_stop_over_due_times_fires_once_on_restart_when_fire_once(uow: UowFactory) -> None:
    clock = ManualClock(at(2026, 1, 1))
    ports = ports_on(uow, clock)
    job = (await cron_job(ports, "0 * * * *", misfire=Misfire.FIRE_ONCE)).job
    clock.advance(3 * 3600 + 600)  # no scheduler ran at 01:00, 02:00, 03:00
    assert await fire_due_jobs(ports) == 1
    assert await fire_due_jobs(ports) == 0
    (run,) = await runs_of(ports, job.id)
    assert (run.status, run.scheduled_for, run.fired_at) == (RunStatus.FIRED, at(2026, 1, 1, 1), at(2026, 1, 1, 3, 10))
    assert (await jobs.get_job(ports, ORG, job.id)).job.next_run_at == at(2026, 1, 1, 4)


async def test_a_stop_over_due_times_is_recorded_as_skipped_when_skip(uow: UowFactory) -> None:
    clock = ManualClock(at(2026, 1, 1))
    ports = ports_on(uow, clock)
    job = (await cron_job(ports, "0 * * * *", misfire=Misfire.SKIP)).job
    clock.advance(3600 + 30)  # within the grace: on time
    assert await fire_due_jobs(ports) == 1
    clock.advance(5 * 3600)
    assert await fire_due_jobs(ports) == 1
    on_time, missed = await runs_of(ports, job.id)
    assert on_time.status is RunStatus.FIRED
    assert (missed.status, missed.execution_id, missed.scheduled_for) == (RunStatus.SKIPPED, None, at(2026, 1, 1, 2))
    assert missed.skipped_reason is not None
    assert missed.skipped_reason.startswith("misfire")
    assert (await jobs.get_job(ports, ORG, job.id)).job.next_run_at == at(2026, 1, 1, 7)


async def test_disabled_jobs_do_not_fire_and_resume_from_now(uow: UowFactory) -> None:
    clock = ManualClock(at(2026, 1, 1))
    ports = ports_on(uow, clock)
    job = (await cron_job(ports, "0 * * * *")).job
    await jobs.update_job(ports, ORG, job.id, jobs.UpdateJob(enabled=False))
    clock.advance(5 * 3600)
    assert await fire_due_jobs(ports) == 0
    resumed = await jobs.update_job(ports, ORG, job.id, jobs.UpdateJob(enabled=True))
    assert resumed.job.next_run_at == at(2026, 1, 1, 6)
    assert await runs_of(ports, job.id) == []


async def test_a_spring_forward_day_fires_a_0230_job_once_at_the_jump(uow: UowFactory) -> None:
    clock = ManualClock(at(2026, 3, 7, 12))  # the day before the change in New York (2026-03-08, 02:00 -> 03:00)
    ports = ports_on(uow, clock)
    job = (await cron_job(ports, "30 2 * * *", NEW_YORK)).job
    assert job.next_run_at == at(2026, 3, 8, 7)  # 02:30 does not exist that day: 03:00 EDT, the instant of the jump
    clock.advance((at(2026, 3, 8, 7) - clock.now()).total_seconds())
    assert await fire_due_jobs(ports) == 1
    assert (await jobs.get_job(ports, ORG, job.id)).job.next_run_at == at(2026, 3, 9, 6, 30)  # 02:30 EDT


async def test_a_fall_back_day_fires_each_local_time_once(uow: UowFactory) -> None:
    start = at(2026, 11, 1, 4)  # midnight EDT on the day New York falls back (02:00 EDT -> 01:00 EST)
    clock = ManualClock(start - timedelta(minutes=1))
    ports = ports_on(uow, clock)
    hourly = (await cron_job(ports, "0 * * * *", NEW_YORK, name="hourly")).job
    daily = (await cron_job(ports, "30 1 * * *", NEW_YORK, name="daily")).job
    clock.advance(60)
    for _ in range(25):  # the day has 25 hours
        await fire_due_jobs(ports)
        clock.advance(1800)
        await fire_due_jobs(ports)
        clock.advance(1800)
    fired = [run.scheduled_for for run in await runs_of(ports, hourly.id)]
    # 01:00 EDT fires, 01:00 EST (its repeat) does not: 24 firings on a 25-hour day (tests/security/test_cron_dst.py)
    assert fired == [start + timedelta(hours=n) for n in range(25) if n != 2]
    assert [run.scheduled_for for run in await runs_of(ports, daily.id)] == [at(2026, 11, 1, 5, 30)]  # once


async def test_runs_are_scoped_paged_newest_first_and_go_with_their_job(uow: UowFactory) -> None:
    clock = ManualClock(at(2026, 1, 1))
    ports = ports_on(uow, clock)
    job = (await cron_job(ports, "* * * * *")).job
    for _ in range(3):
        clock.advance(60)
        await fire_due_jobs(ports)
    async with uow() as work:
        page, total = await work.jobs.run_page(ORG, job.id, PageRequest(limit=2, offset=0, order=Order.DESC))
        assert total == 3
        assert [run.scheduled_for for run in page] == [at(2026, 1, 1, 0, 3), at(2026, 1, 1, 0, 2)]
        oldest, _ = await work.jobs.run_page(ORG, job.id, PageRequest(limit=2, offset=0))
        assert [run.scheduled_for for run in oldest] == [at(2026, 1, 1, 0, 1), at(2026, 1, 1, 0, 2)]
        assert await work.jobs.run_page("org-b", job.id, EVERYTHING) == ([], 0)
        assert await work.jobs.get("org-b", job.id) is None
        run = replace(page[0], id="webhook-run", webhook_id="msg-1", trigger=TriggerType.WEBHOOK)
        await work.jobs.add_run(run)
        with pytest.raises(Conflict):
            await work.jobs.add_run(replace(run, id="webhook-run-2"))
    async with uow() as work:
        await work.jobs.add_run(run)
        assert await work.jobs.run_for_webhook(ORG, job.id, "msg-1") == run
        await work.jobs.delete(ORG, job.id)
        await work.commit()
    async with uow() as work:
        assert await work.jobs.run_page(ORG, job.id, EVERYTHING) == ([], 0)
        assert await work.jobs.run_for_webhook(ORG, job.id, "msg-1") is None


async def test_a_claim_is_a_compare_and_set(uow: UowFactory) -> None:
    clock = ManualClock(at(2026, 1, 1))
    ports = ports_on(uow, clock)
    job = (await cron_job(ports, "* * * * *")).job
    other = (await cron_job(ports, "* * * * *", name="other")).job
    async with uow() as work:
        assert await work.jobs.claim([]) == []
        (claimed,) = await work.jobs.claim(
            [(job, at(2026, 1, 1, 0, 2)), (replace(other, next_run_at=at(2025, 1, 1)), None)]
        )
        assert (claimed.id, claimed.next_run_at) == (job.id, at(2026, 1, 1, 0, 2))  # the row as it is now
        assert await work.jobs.claim([(job, at(2026, 1, 1, 0, 3))]) == []  # it holds another value now
        await work.commit()
    async with uow() as work:
        stored = await work.jobs.get(ORG, job.id)
        assert stored is not None
        assert stored.next_run_at == at(2026, 1, 1, 0, 2)
        both = await work.jobs.claim([(stored, None), (other, at(2026, 1, 1, 0, 5))])
        assert sorted((each.id, each.next_run_at) for each in both) == sorted(
            [(job.id, None), (other.id, at(2026, 1, 1, 0, 5))])  # fmt: skip


async def test_two_nodes_on_one_postgres_fire_each_firing_once(postgres_engine: AsyncEngine, postgres_url: str) -> None:
    other = create_engine(postgres_url)
    try:
        clock = ManualClock(at(2026, 1, 1))
        nodes = [ports_on(lambda: SqlUnitOfWork(postgres_engine), clock), ports_on(lambda: SqlUnitOfWork(other), clock)]
        made = [(await cron_job(nodes[0], "* * * * *", name=f"j{n}")).job for n in range(20)]
        per_node = [0, 0]
        for _ in range(3):
            clock.advance(60)
            fired = await asyncio.gather(*(fire_due_jobs(node) for node in nodes for _ in range(2)))
            assert sum(fired) == 20
            per_node = [per_node[0] + fired[0] + fired[1], per_node[1] + fired[2] + fired[3]]
        assert sum(per_node) == 60
        for job in made:
            runs = await runs_of(nodes[1], job.id)
            assert len({run.execution_id for run in runs}) == len(runs) == 3
    finally:
        await other.dispose()
