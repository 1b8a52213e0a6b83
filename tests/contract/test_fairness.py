"""Background work is shared fairly between organizations on every store: a scheduler round and a timeout sweep
read their due items in turns (every organization's earliest before any organization's second, at most so many
of one organization), so that one organization's backlog delays another's due item by at most one item of each
organization ahead of it, not by the whole backlog. A clock the tests move; the rounds are called directly."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.jobs.cron import CronsimCalendar
from controlplane_adapters.jobs.trigger_signatures import StandardWebhooks
from controlplane_domain.agents import usecases as agents
from controlplane_domain.environments import usecases as environments
from controlplane_domain.executions import leases
from controlplane_domain.jobs import usecases as jobs
from controlplane_domain.jobs.entity import Target, TargetKind, Trigger, TriggerType
from controlplane_domain.jobs.firing import DUE_BATCH, DUE_PER_ORGANIZATION, fire_due_round
from controlplane_domain.paging import PageRequest
from controlplane_domain.ports import Ports
from controlplane_domain.workflows import runs, usecases
from controlplane_domain.workflows.entity import StepDefinition
from controlplane_domain.workflows.timeouts import time_out_steps
from tests.contract.conftest import UowFactory

BUSY, QUIET = "org-busy", "org-quiet"
EVERYTHING = PageRequest(limit=200, offset=0)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def ports_on(uow: UowFactory, clock: ManualClock) -> Ports:
    return Ports(
        uow=uow, clock=clock, ids=UuidGenerator(), cron=CronsimCalendar(), signatures=StandardWebhooks(), max_attempts=2
    )


async def agent_and_queue(ports: Ports, org: str) -> tuple[str, str]:
    agent = await agents.create_agent(ports, org, agents.CreateAgent(name="agent"))
    environment = await environments.create_environment(ports, org, environments.CreateEnvironment(name="env"))
    queue = await environments.create_queue(ports, org, environment.id, environments.CreateQueue(name="q"))
    return agent.id, queue.queue.id


async def cron_jobs(ports: Ports, org: str, cron: str, count: int) -> list[str]:
    agent_id, queue_id = await agent_and_queue(ports, org)
    made = []
    for n in range(count):
        command = jobs.CreateJob(
            name=f"job-{n}", trigger=Trigger(TriggerType.CRON, cron, "UTC"), target=Target(TargetKind.AGENT, agent_id),
            prompt="go", worker_queue_id=queue_id,
        )  # fmt: skip
        made.append((await jobs.create_job(ports, org, command, principal=None)).job.id)
    return made


async def run_count(ports: Ports, org: str, job_ids: list[str]) -> int:
    return sum([len((await jobs.list_runs(ports, org, job_id, EVERYTHING)).items) for job_id in job_ids])


async def test_one_organizations_backlog_does_not_hold_back_anothers_firing(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    ports = ports_on(uow, clock)
    backlog = DUE_BATCH + 20  # more than a round reads: earliest first alone, the quiet firing would wait a round
    busy = await cron_jobs(ports, BUSY, "* * * * *", backlog)  # due at 00:01
    quiet = await cron_jobs(ports, QUIET, "*/2 * * * *", 1)  # due at 00:02: later than every busy firing
    clock.advance(150)
    first = await fire_due_round(ports)
    assert await run_count(ports, QUIET, quiet) == 1  # fired in the first round, with the busy one's first firings
    assert await run_count(ports, BUSY, busy) == DUE_PER_ORGANIZATION  # no more of one organization in a round
    assert (first.read, first.fired, first.more) == (DUE_PER_ORGANIZATION + 1, DUE_PER_ORGANIZATION + 1, True)
    rounds = 1
    while (await fire_due_round(ports)).more:  # the rounds that follow fire the rest of the backlog
        rounds += 1
        assert rounds < 10
    assert await run_count(ports, BUSY, busy) == backlog
    assert (await fire_due_round(ports)).read == 0


CHAIN = (StepDefinition(id="a", agent_id="-", prompt="a", max_attempts=2, timeout_seconds=30),)


async def leased_runs(ports: Ports, org: str, count: int) -> None:
    """`count` runs of a one-step workflow of `org`, each step's execution leased now (its timeout counts)."""
    agent_id, queue_id = await agent_and_queue(ports, org)
    steps = tuple(replace(step, agent_id=agent_id) for step in CHAIN)
    workflow = await usecases.create_workflow(ports, org, usecases.CreateWorkflow(name="flow", steps=steps))
    for _ in range(count):
        await runs.start_run(ports, org, workflow.id, runs.StartRun(worker_queue_id=queue_id))
        assert await leases.try_lease(ports, org, queue_id, "w1") is not None


async def test_a_timeout_sweep_checks_every_organization_in_turn(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    ports = ports_on(uow, clock)
    await leased_runs(ports, BUSY, 4)  # due at T0 + 30
    clock.advance(1)
    await leased_runs(ports, QUIET, 1)  # due at T0 + 31: after every busy one
    clock.advance(40)
    first = await time_out_steps(ports, limit=2, per_organization=3)
    assert (first.runs, first.timed_out, first.more) == (2, 2, True)  # the busy one's earliest, then the quiet one's
    quiet = await runs.list_runs(ports, QUIET, EVERYTHING, runs.RunFilter())
    assert [run.steps[0].attempt for run in quiet.items] == [2]  # timed out, and retried
    second = await time_out_steps(ports, limit=10, per_organization=2)
    assert (second.runs, second.timed_out, second.more) == (2, 2, True)  # at most 2 of one organization a sweep
    third = await time_out_steps(ports, limit=10, per_organization=2)
    assert (third.runs, third.more) == (1, False)
