"""Analytics on every store (memory, SQLite, Postgres): one small data set, every expected figure worked out by
hand below (docs/analytics.md has the definitions)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from controlplane_domain.analytics.entity import AgentOrder, Bucket, GroupBy, Metric, Scope, TimeRange
from controlplane_domain.executions.entity import Execution, ExecutionStatus, TargetType
from controlplane_domain.projects.entity import MemberKind, Project, ProjectStatus
from tests.contract.conftest import UowFactory
from tests.contract.test_repositories import agent, model, team

S = ExecutionStatus
T0 = datetime(2026, 3, 1, tzinfo=UTC)
DAY = timedelta(days=1)
WINDOW = TimeRange(T0, T0 + 2 * DAY)
HOUR = timedelta(hours=1)
ALPHA, BETA, GAMMA, DELTA = "org-a-alpha", "org-a-beta", "org-a-gamma", "org-a-delta"
TEAM = "org-a-team-t1"


def execution(
    key: str, status: S, created: timedelta, *, agent_id: str | None = None, team_id: str | None = None,
    wait: float | None = None, duration: float | None = None, usage: dict[str, Any] | None = None,
    org: str = "org-a", finished: bool = False,
) -> Execution:  # fmt: skip
    """Created (and queued) at T0 + created, started `wait` seconds later, finished `duration` after the start
    (`finished`: one second after creation without a start, as a cancel before any worker)."""
    at = T0 + created
    started = at + timedelta(seconds=wait) if wait is not None else None
    end = started + timedelta(seconds=duration) if started is not None and duration is not None else None
    return Execution(
        id=f"{org}-{key}", organization_id=org, target_type=TargetType.TEAM if team_id else TargetType.AGENT,
        agent_id=agent_id, team_id=team_id, worker_queue_id="q", prompt="p", status=status, usage=usage or {},
        created_at=at, updated_at=at, queued_at=at, started_at=started,
        finished_at=end if not finished else at + timedelta(seconds=1),
    )  # fmt: skip


EXECUTIONS = [
    # alpha (model by id: gpt-a, 2 and 10 a million; team t1): cost (1000 x 2 + 500 x 10) / 1e6 = 0.007
    execution("e1", S.COMPLETED, HOUR, agent_id=ALPHA, wait=2, duration=10,
              usage={"prompt_tokens": 1000, "completion_tokens": 500}),
    execution("e2", S.FAILED, 1.5 * HOUR, agent_id=ALPHA, wait=4, duration=20,
              usage={"prompt_tokens": 2000, "completion_tokens": 0}),  # 0.004
    # beta (model by value: gpt-b, 1 a million in, no output price): 30000 x 1 / 1e6 = 0.03
    execution("e3", S.COMPLETED, DAY + 3 * HOUR, agent_id=BETA, wait=1, duration=30,
              usage={"input_tokens": 30000, "output_tokens": 1000}),
    execution("e4", S.TIMED_OUT, DAY + 3.25 * HOUR, agent_id=BETA, wait=6, duration=40),
    # gamma (a model name with no record): cancelled before a worker started it, at the range's very start
    execution("e5", S.CANCELLED, timedelta(0), agent_id=GAMMA, finished=True),
    # the team's own execution: no agent, so no model and no cost
    execution("e6", S.COMPLETED, DAY + 10 * HOUR, team_id=TEAM, wait=3, duration=50,
              usage={"prompt_tokens": 100, "completion_tokens": 100}),
    # still running; usage that does not count (a boolean, a negative number)
    execution("e7", S.RUNNING, DAY + 23 * HOUR, agent_id=ALPHA, wait=5,
              usage={"prompt_tokens": True, "completion_tokens": -5}),
    execution("e11", S.QUEUED, DAY + 12 * HOUR, agent_id=DELTA),  # delta: no model
    # outside the range: at its end (excluded), after it, just before it
    execution("e12", S.COMPLETED, 2 * DAY, agent_id=ALPHA, wait=1, duration=1, usage={"prompt_tokens": 7}),
    execution("e8", S.QUEUED, 2 * DAY + HOUR, agent_id=ALPHA),
    execution("e9", S.COMPLETED, -timedelta(seconds=1), agent_id=ALPHA, wait=1, duration=1),
    # another organization's, in the range, with its own priced model named like ours
    execution("b1", S.COMPLETED, HOUR, agent_id="org-b-alpha", wait=100, duration=100, org="org-b",
              usage={"prompt_tokens": 10**6, "completion_tokens": 10**6}),
]  # fmt: skip


@pytest.fixture
async def seeded(uow: UowFactory) -> UowFactory:
    async with uow() as work:
        await work.models.add(replace(model("gpt-a"), input_cost_per_million=2.0, output_cost_per_million=10.0))
        await work.models.add(replace(model("gpt-b"), input_cost_per_million=1.0))
        for value in ("gpt-a", "gpt-b"):
            await work.models.add(
                replace(model(value, org="org-b"), input_cost_per_million=999.0, output_cost_per_million=999.0)
            )
        await work.teams.add(team("t1"))
        await work.agents.add(agent("alpha", model_id="org-a-gpt-a", team_id=TEAM))
        await work.agents.add(agent("beta", model_id="gpt-b"))
        await work.agents.add(agent("gamma", model_id="unregistered-x"))
        await work.agents.add(agent("delta"))
        await work.agents.add(agent("alpha", org="org-b", model_id="gpt-a"))
        await work.projects.add(
            Project(id="p1", organization_id="org-a", name="p", key="P", description=None,
                    status=ProjectStatus.ACTIVE, settings={}, created_at=T0, updated_at=T0)
        )  # fmt: skip
        await work.projects.set_member("org-a", "p1", MemberKind.AGENT, BETA, True, T0)
        await work.projects.set_member("org-a", "p1", MemberKind.TEAM, TEAM, True, T0)
        for each in EXECUTIONS:  # each with what it runs with, as an execute takes it
            run_with = await work.executions.run_with(each.organization_id, each.agent_id or "")
            if run_with is not None:
                each = run_with.applied(each)
            elif each.team_id is not None:
                each = replace(each, target_name="t1")
            await work.executions.record(None, each, [])
        await work.commit()
    return uow


def statuses(**counts: int) -> dict[str, int]:
    return {status.value: counts.get(status.value, 0) for status in S}


async def test_the_summary_of_the_organization(seeded: UowFactory) -> None:
    async with seeded() as work:
        totals = await work.analytics.summary("org-a", WINDOW, Scope())
    # e1 to e7 and e11: 3 completed, 1 failed, 1 timed out, 1 cancelled (6 finished), 1 running, 1 queued
    assert totals.by_status == statuses(completed=3, failed=1, timed_out=1, cancelled=1, running=1, queued=1)
    # durations 10, 20, 30, 40, 50: p50 at position 2; p95 at 3.8 (40 + 0.8 x 10); p99 at 3.96
    assert (totals.duration_p50, totals.duration_p95, totals.duration_p99) == pytest.approx((30, 48, 49.6))
    # queue waits 1, 2, 3, 4, 5, 6 (e5 and e11 never started): p50 at 2.5, p95 at 4.75
    assert (totals.queue_wait_p50, totals.queue_wait_p95) == pytest.approx((3.5, 5.75))
    assert (totals.prompt_tokens, totals.completion_tokens) == (1000 + 2000 + 30000 + 100, 500 + 0 + 1000 + 100)
    assert totals.cost == pytest.approx(0.007 + 0.004 + 0.03)


@pytest.mark.parametrize(
    ("scope", "counts", "cost"),
    [
        # alpha's e1, e2, e7
        (Scope(agent_id=ALPHA), statuses(completed=1, failed=1, running=1), 0.011),
        # the team's own e6 and its agent alpha's
        (Scope(team_id=TEAM), statuses(completed=2, failed=1, running=1), 0.011),
        # the project holds beta (e3, e4) and the team (e6, and alpha's e1, e2, e7)
        (Scope(project_id="p1"), statuses(completed=3, failed=1, timed_out=1, running=1), 0.041),
        (Scope(project_id="unknown"), statuses(), 0.0),
        (Scope(agent_id="org-b-alpha"), statuses(), 0.0),
    ],
)
async def test_a_summary_filtered(seeded: UowFactory, scope: Scope, counts: dict[str, int], cost: float) -> None:
    async with seeded() as work:
        totals = await work.analytics.summary("org-a", WINDOW, scope)
    assert totals.by_status == counts
    assert totals.cost == pytest.approx(cost)


async def test_the_summary_of_alpha_in_detail_and_of_nothing(seeded: UowFactory) -> None:
    async with seeded() as work:
        alpha = await work.analytics.summary("org-a", WINDOW, Scope(agent_id=ALPHA))
        empty = await work.analytics.summary("org-a", TimeRange(T0 + 3 * DAY, T0 + 4 * DAY), Scope())
    # durations 10, 20: p95 at 0.95 (19.5); waits 2, 4, 5: p95 at 1.9 (4 + 0.9)
    assert (alpha.duration_p50, alpha.duration_p95, alpha.duration_p99) == pytest.approx((15, 19.5, 19.9))
    assert (alpha.queue_wait_p50, alpha.queue_wait_p95) == pytest.approx((4, 4.9))
    assert (alpha.prompt_tokens, alpha.completion_tokens) == (3000, 500)
    assert empty.by_status == statuses()
    assert (empty.duration_p50, empty.queue_wait_p95, empty.prompt_tokens, empty.cost) == (None, None, 0, 0)


async def test_another_organization_counts_only_its_own(seeded: UowFactory) -> None:
    async with seeded() as work:
        totals = await work.analytics.summary("org-b", WINDOW, Scope())
    assert totals.by_status == statuses(completed=1)
    assert totals.cost == pytest.approx(2 * 999.0)  # a million tokens each way at its own prices


def by_key(rows: list[Any]) -> dict[tuple[datetime, str | None], Any]:
    return {(row.start, row.group): row.value for row in rows}


D1, D2 = T0, T0 + DAY


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        (Metric.EXECUTIONS, {D1: 3, D2: 5}),
        (Metric.TOKENS, {D1: 1500 + 2000, D2: 31000 + 200}),
        (Metric.COST, {D1: 0.011, D2: 0.03}),
        (Metric.DURATION_P95, {D1: 19.5, D2: 49.0}),  # 10, 20; and 30, 40, 50 (position 1.9)
    ],
)
async def test_a_daily_series(seeded: UowFactory, metric: Metric, expected: dict[datetime, float]) -> None:
    async with seeded() as work:
        rows = await work.analytics.timeseries("org-a", WINDOW, metric, Bucket.DAY, None)
    assert by_key(rows) == pytest.approx({(start, None): value for start, value in expected.items()})


async def test_an_hourly_series_has_the_hours_that_ran(seeded: UowFactory) -> None:
    async with seeded() as work:
        rows = await work.analytics.timeseries("org-a", WINDOW, Metric.EXECUTIONS, Bucket.HOUR, None)
    hours = {T0: 1, T0 + HOUR: 2, D2 + 3 * HOUR: 2, D2 + 10 * HOUR: 1, D2 + 12 * HOUR: 1, D2 + 23 * HOUR: 1}
    assert by_key(rows) == {(start, None): count for start, count in hours.items()}


@pytest.mark.parametrize(
    ("group_by", "metric", "expected"),
    [
        (GroupBy.STATUS, Metric.EXECUTIONS, {
            (D1, "completed"): 1, (D2, "completed"): 2, (D1, "failed"): 1, (D1, "cancelled"): 1,
            (D2, "timed_out"): 1, (D2, "running"): 1, (D2, "queued"): 1,
        }),
        (GroupBy.AGENT, Metric.EXECUTIONS, {
            (D1, ALPHA): 2, (D2, ALPHA): 1, (D2, BETA): 2, (D1, GAMMA): 1, (D2, DELTA): 1, (D2, None): 1,
        }),
        (GroupBy.TEAM, Metric.EXECUTIONS, {(D1, TEAM): 2, (D2, TEAM): 2, (D1, None): 1, (D2, None): 3}),
        # a model as its record's value (alpha names gpt-a by id), else as the agent names it
        (GroupBy.MODEL, Metric.COST, {
            (D1, "gpt-a"): 0.011, (D2, "gpt-a"): 0.0, (D2, "gpt-b"): 0.03, (D1, "unregistered-x"): 0.0,
            (D2, None): 0.0,
        }),
    ],
)  # fmt: skip
async def test_a_grouped_series(
    seeded: UowFactory, group_by: GroupBy, metric: Metric, expected: dict[tuple[datetime, str | None], float]
) -> None:
    async with seeded() as work:
        rows = await work.analytics.timeseries("org-a", WINDOW, metric, Bucket.DAY, group_by)
    assert by_key(rows) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("order_by", "ranking"),
    [
        (AgentOrder.EXECUTIONS, [ALPHA, BETA, DELTA, GAMMA]),  # 3, 2, 1, 1 (ties by id)
        (AgentOrder.COST, [BETA, ALPHA, DELTA, GAMMA]),  # 0.03, 0.011, 0, 0
        (AgentOrder.FAILURE_RATE, [ALPHA, BETA, GAMMA, DELTA]),  # 1/2, 1/2, 0/1, none finished
    ],
)
async def test_the_ranked_agents(seeded: UowFactory, order_by: AgentOrder, ranking: list[str]) -> None:
    async with seeded() as work:
        rows = await work.analytics.agents("org-a", WINDOW, order_by)
    assert [row.agent_id for row in rows] == ranking
    alpha = next(row for row in rows if row.agent_id == ALPHA)
    assert (alpha.name, alpha.executions) == ("alpha", 3)
    assert alpha.by_status == statuses(completed=1, failed=1, running=1)
    assert (alpha.duration_p50, alpha.duration_p95) == pytest.approx((15, 19.5))
    assert (alpha.prompt_tokens, alpha.completion_tokens, alpha.cost) == (3000, 500, pytest.approx(0.011))


async def figures(work: Any) -> tuple[Any, ...]:
    """Every figure analytics answers of the range: the summary, the series by model and by team, the ranking."""
    return (
        await work.analytics.summary("org-a", WINDOW, Scope()),
        await work.analytics.summary("org-a", WINDOW, Scope(team_id=TEAM)),
        sorted(map(repr, await work.analytics.timeseries("org-a", WINDOW, Metric.COST, Bucket.DAY, GroupBy.MODEL))),
        sorted(map(repr, await work.analytics.timeseries("org-a", WINDOW, Metric.TOKENS, Bucket.DAY, GroupBy.TEAM))),
        await work.analytics.agents("org-a", WINDOW, AgentOrder.COST),
    )


async def test_repricing_renaming_or_deleting_later_changes_no_past_figure(seeded: UowFactory) -> None:
    async with seeded() as work:
        before = await figures(work)
        for key in ("org-a-gpt-a", "org-a-gpt-b"):
            priced = await work.models.get("org-a", key)
            assert priced is not None
            await work.models.update(replace(priced, value=f"{priced.value}-v2", input_cost_per_million=50.0,
                                             output_cost_per_million=70.0))  # fmt: skip
        beta = await work.agents.get("org-a", BETA)
        assert beta is not None
        await work.agents.update(replace(beta, name="beta renamed", model_id="unregistered-y", team_id=TEAM))
        await work.agents.delete("org-a", ALPHA)
        await work.agents.delete("org-a", GAMMA)
        await work.models.delete("org-a", "org-a-gpt-b")
        await work.teams.delete("org-a", TEAM)
        await work.commit()
    async with seeded() as work:
        after = await figures(work)
    assert after == before
    rows = {row.agent_id: row for row in after[-1]}
    assert (rows[ALPHA].name, rows[BETA].name, rows[GAMMA].name) == ("alpha", "beta", "gamma")
    assert rows[BETA].cost == pytest.approx(0.03)
