"""Analytics in the memory store: the same definitions as the SQL statements, computed over the tables."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Self

from controlplane_adapters.projects.memory import Memberships
from controlplane_domain.agents.entity import Agent
from controlplane_domain.analytics.entity import (
    AgentOrder,
    AgentRow,
    Bucket,
    GroupBy,
    Metric,
    Scope,
    SeriesRow,
    TimeRange,
    Totals,
    rates,
)
from controlplane_domain.analytics.facts import cost_of, percentile, reported_tokens, seconds_between
from controlplane_domain.executions.entity import Execution, ExecutionStatus
from controlplane_domain.projects.entity import MemberKind, Project
from controlplane_domain.teams.entity import Team

if TYPE_CHECKING:
    from controlplane_adapters.memory.store import MemoryUnitOfWork


@dataclass(frozen=True, slots=True)
class Fact:
    execution: Execution
    team: str | None
    model: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    duration: float | None
    wait: float | None
    cost: float


def _percentile(values: Iterable[float | None], fraction: float) -> float | None:
    return percentile(sorted(value for value in values if value is not None), fraction)


def _by_status(facts: Iterable[Fact]) -> dict[str, int]:
    counts = dict.fromkeys((status.value for status in ExecutionStatus), 0)
    for fact in facts:
        counts[fact.execution.status.value] += 1
    return counts


def _tokens(facts: Iterable[Fact], name: str) -> int:
    return sum(getattr(fact, name) or 0 for fact in facts)


class MemoryAnalyticsRepository:
    @classmethod
    def on(cls, unit: MemoryUnitOfWork) -> Self:
        """The repository of a memory unit of work (`areas.py`)."""
        projects = (unit.table("projects"), unit.table("project_members"))
        return cls(unit.table("executions"), unit.table("agents"), unit.table("teams"), projects)

    def __init__(
        self,
        executions: Mapping[str, Execution],
        agents: Mapping[str, Agent],
        teams: Mapping[str, Team],
        projects: tuple[Mapping[str, Project], Memberships],
    ) -> None:
        self._executions, self._agents, self._teams = executions, agents, teams
        self._projects, self._members = projects

    def _facts(self, organization_id: str, window: TimeRange) -> list[Fact]:
        facts = []
        for execution in self._executions.values():
            if execution.organization_id != organization_id:
                continue
            if not window.start <= execution.created_at < window.end:
                continue
            prompt, completion = reported_tokens(execution.usage)
            prices = (execution.input_cost_per_million, execution.output_cost_per_million)
            facts.append(
                Fact(
                    execution=execution,
                    team=execution.team_id or execution.agent_team_id,
                    model=execution.model,
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    duration=seconds_between(execution.started_at, execution.finished_at),
                    wait=seconds_between(execution.queued_at, execution.started_at),
                    cost=cost_of(prompt, completion, *prices),
                )
            )
        return facts

    def _held(self, organization_id: str, project_id: str, kind: MemberKind, alive: Mapping[str, object]) -> set[str]:
        project = self._projects.get(project_id)
        if project is None or project.organization_id != organization_id:
            return set()
        return {member for (held_by, what, member) in self._members if held_by == project_id and what == kind.value
                and member in alive}  # fmt: skip

    async def summary(self, organization_id: str, window: TimeRange, scope: Scope) -> Totals:
        facts = self._facts(organization_id, window)
        if scope.agent_id is not None:
            facts = [fact for fact in facts if fact.execution.agent_id == scope.agent_id]
        if scope.team_id is not None:
            facts = [fact for fact in facts if fact.team == scope.team_id]
        if scope.project_id is not None:
            agents = self._held(organization_id, scope.project_id, MemberKind.AGENT, self._agents)
            teams = self._held(organization_id, scope.project_id, MemberKind.TEAM, self._teams)
            facts = [fact for fact in facts if fact.execution.agent_id in agents or fact.team in teams]
        durations = [fact.duration for fact in facts]
        waits = [fact.wait for fact in facts]
        return Totals(
            by_status=_by_status(facts),
            duration_p50=_percentile(durations, 0.5),
            duration_p95=_percentile(durations, 0.95),
            duration_p99=_percentile(durations, 0.99),
            queue_wait_p50=_percentile(waits, 0.5),
            queue_wait_p95=_percentile(waits, 0.95),
            prompt_tokens=_tokens(facts, "prompt_tokens"),
            completion_tokens=_tokens(facts, "completion_tokens"),
            cost=sum(fact.cost for fact in facts),
        )

    async def timeseries(
        self, organization_id: str, window: TimeRange, metric: Metric, bucket: Bucket, group_by: GroupBy | None
    ) -> list[SeriesRow]:
        group_of: Callable[[Fact], str | None] = {
            None: lambda fact: None,
            GroupBy.AGENT: lambda fact: fact.execution.agent_id,
            GroupBy.TEAM: lambda fact: fact.team,
            GroupBy.MODEL: lambda fact: fact.model,
            GroupBy.STATUS: lambda fact: fact.execution.status.value,
        }[group_by]
        groups: dict[tuple[datetime, str | None], list[Fact]] = defaultdict(list)
        for fact in self._facts(organization_id, window):
            groups[(bucket.floor(fact.execution.created_at), group_of(fact))].append(fact)
        value: Callable[[list[Fact]], float | int | None] = {
            Metric.EXECUTIONS: len,
            Metric.TOKENS: lambda facts: _tokens(facts, "prompt_tokens") + _tokens(facts, "completion_tokens"),
            Metric.COST: lambda facts: sum(fact.cost for fact in facts),
            Metric.DURATION_P95: lambda facts: _percentile((fact.duration for fact in facts), 0.95),
        }[metric]
        return [SeriesRow(start, group, value(facts)) for (start, group), facts in groups.items()]

    async def agents(self, organization_id: str, window: TimeRange, order_by: AgentOrder) -> list[AgentRow]:
        groups: dict[str, list[Fact]] = defaultdict(list)
        for fact in self._facts(organization_id, window):
            if fact.execution.agent_id is not None:
                groups[fact.execution.agent_id].append(fact)
        rows = [
            AgentRow(
                agent_id=agent_id,
                name=max(facts, key=lambda fact: (fact.execution.created_at, fact.execution.id)).execution.target_name,
                by_status=_by_status(facts),
                duration_p50=_percentile((fact.duration for fact in facts), 0.5),
                duration_p95=_percentile((fact.duration for fact in facts), 0.95),
                prompt_tokens=_tokens(facts, "prompt_tokens"),
                completion_tokens=_tokens(facts, "completion_tokens"),
                cost=sum(fact.cost for fact in facts),
            )
            for agent_id, facts in groups.items()
        ]

        def rank(row: AgentRow) -> tuple[bool, float, str]:
            if order_by is AgentOrder.FAILURE_RATE:
                failure = rates(row.by_status)[1]
                return failure is None, -(failure or 0.0), row.agent_id
            return False, -(row.executions if order_by is AgentOrder.EXECUTIONS else row.cost), row.agent_id

        return sorted(rows, key=rank)
