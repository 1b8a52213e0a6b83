"""The analytics statements, one a call: the executions of a range joined to their agent and the agent's model
(`facts`), aggregated by the database. Percentiles are the domain's definition (`analytics.facts.percentile`),
in each database's strategy: Postgres's `percentile_cont` (kept for its speed: one sort a measure, where the
window ranks cost the summary several times as long, docs/benchmarks.md), on SQLite window ranks (`ranked`,
`percentile`); `tests/contract/test_percentile_rule.py`, a property test on every store, holds both to the
domain's. Buckets: `date_trunc` on Postgres, `strftime` on SQLite."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.agents.sql import agents
from controlplane_adapters.executions.table import executions
from controlplane_adapters.llm_models.sql import llm_models
from controlplane_adapters.projects.sql import project_agents, project_teams
from controlplane_domain.analytics.entity import FAILED, FINISHED, AgentOrder, Bucket, GroupBy, Metric, Scope, TimeRange
from controlplane_domain.executions.entity import ExecutionStatus

e = executions
by_id = llm_models.alias("model_by_id")
by_value = llm_models.alias("model_by_value")
STATUSES = tuple(status.value for status in ExecutionStatus)
MILLION = sa.literal_column("1000000.0", sa.Float)


Of = Callable[[Any], sa.ColumnElement[Any]]
"""An expression of the executions and their `agent` (`agent_facts`)."""


def agent_facts(organization_id: str) -> sa.Subquery:
    """The organization's agents with what an execution takes from its agent: its team, its model (the value of
    the model record its `model_id` names by id or by value, else its `model_id` as written), that model's
    prices. A few rows, joined once to the executions."""
    mine = agents.c.organization_id
    named_by_id = (by_id.c.organization_id == mine) & (by_id.c.id == agents.c.model_id)
    named_by_value = (by_value.c.organization_id == mine) & (by_value.c.value == agents.c.model_id)
    return (
        sa.select(
            agents.c.id,
            agents.c.name,
            agents.c.team_id,
            sa.func.coalesce(by_id.c.value, by_value.c.value, agents.c.model_id).label("model"),
            sa.func.coalesce(by_id.c.input_cost_per_million, by_value.c.input_cost_per_million).label("input_price"),
            sa.func.coalesce(by_id.c.output_cost_per_million, by_value.c.output_cost_per_million).label("output_price"),
        )
        .select_from(agents.outerjoin(by_id, named_by_id).outerjoin(by_value, named_by_value))
        .where(mine == organization_id)
        .subquery("agent")
    )


def _literal(value: str) -> sa.ColumnElement[str]:
    return sa.literal_column(f"'{value}'")  # statuses as literals: no bound parameter for a fixed word


def _seconds(start: sa.ColumnElement[Any], end: sa.ColumnElement[Any], postgres: bool) -> sa.ColumnElement[Any]:
    """`end - start` in seconds: exact microseconds, then divided (SQLite stores '2026-03-01 12:00:00.123456')."""
    if postgres:  # date_part is double precision (extract's numeric costs several times more)
        return sa.func.date_part("epoch", end - start, type_=sa.Float)

    def micro(moment: sa.ColumnElement[Any]) -> sa.ColumnElement[int]:
        whole = sa.cast(sa.func.strftime("%s", moment), sa.BigInteger) * 1_000_000
        return whole + sa.cast(sa.func.substr(moment, 21, 6), sa.BigInteger)

    seconds: sa.ColumnElement[Any] = (micro(end) - micro(start)) / MILLION
    return seconds


def facts(organization_id: str, window: TimeRange, postgres: bool, *where: Any, **extra: Any) -> sa.Select[Any]:
    """One row an execution of the organization created in the range (and `where`, which may name the agent's
    columns as `agent`): what analytics counts. `extra` columns are functions of the executions and `agent`."""
    agent = agent_facts(organization_id)

    def priced(tokens: sa.ColumnElement[int], price: sa.ColumnElement[float]) -> sa.ColumnElement[float]:
        return sa.func.coalesce(tokens * price, sa.literal_column("0.0", sa.Float))

    cost = priced(e.c.prompt_tokens, agent.c.input_price) + priced(e.c.completion_tokens, agent.c.output_price)
    return (
        sa.select(
            e.c.status,
            e.c.agent_id,
            e.c.prompt_tokens,
            e.c.completion_tokens,
            _seconds(e.c.started_at, e.c.finished_at, postgres).label("duration"),
            _seconds(e.c.queued_at, e.c.started_at, postgres).label("wait"),
            (cost / MILLION).label("cost"),
            *(value(agent).label(name) for name, value in extra.items()),
        )
        .select_from(e.outerjoin(agent, agent.c.id == e.c.agent_id))
        .where(
            e.c.organization_id == organization_id,
            e.c.created_at >= window.start,
            e.c.created_at < window.end,
            *where,
        )
    )


def team_of(agent: Any) -> sa.ColumnElement[str]:
    """An execution's team: the team it targets, else its agent's (current) team."""
    return sa.func.coalesce(e.c.team_id, agent.c.team_id)


def _of_teams(organization_id: str, teams: Any) -> sa.ColumnElement[bool]:
    """The executions whose team (`team_of`) is in `teams` (a SELECT of team ids), written so that both
    databases may use the indexes of teams' and of agents' executions: the team's own executions, and those of
    its agents (an agent's execution has no team of its own)."""
    members = sa.select(agents.c.id).where(agents.c.organization_id == organization_id, agents.c.team_id.in_(teams))
    return sa.or_(e.c.team_id.in_(teams), sa.and_(e.c.team_id.is_(None), e.c.agent_id.in_(members)))


def scoped(organization_id: str, scope: Scope) -> list[sa.ColumnElement[bool]]:
    """The summary's filters: an agent, a team (an execution's team as `team_of`), a project's agents and teams."""
    where: list[sa.ColumnElement[bool]] = []
    if scope.agent_id is not None:
        where.append(e.c.agent_id == scope.agent_id)
    if scope.team_id is not None:
        where.append(_of_teams(organization_id, sa.select(sa.literal(scope.team_id))))
    if scope.project_id is not None:
        pa, pt = project_agents, project_teams
        held_agents = sa.select(pa.c.agent_id).where(pa.c.organization_id == organization_id,
                                                     pa.c.project_id == scope.project_id)  # fmt: skip
        held_teams = sa.select(pt.c.team_id).where(pt.c.organization_id == organization_id,
                                                   pt.c.project_id == scope.project_id)  # fmt: skip
        where.append(sa.or_(e.c.agent_id.in_(held_agents), _of_teams(organization_id, held_teams)))
    return where


def status_counts(rows: Any) -> list[sa.ColumnElement[int]]:
    return [sa.func.count().filter(rows.c.status == _literal(status)).label(f"n_{status}") for status in STATUSES]


def ranked(facts_select: sa.Select[Any], measures: Sequence[str], partition_by: Sequence[str]) -> sa.Subquery:
    """SQLite: the facts with each measure's rank (1, 2, ... by value, nulls last) and count of values in its
    partition (the facts' columns named by `partition_by`), the inputs of `percentile`."""
    columns = {column.name: column.element if isinstance(column, sa.Label) else column
               for column in facts_select.selected_columns}  # fmt: skip
    partition = [columns[name] for name in partition_by]
    windows = []
    for name in measures:
        value = columns[name]
        order = (value.is_(None), value)
        windows.append(sa.func.row_number().over(partition_by=list(partition), order_by=order).label(f"rn_{name}"))
        windows.append(sa.func.count(value).over(partition_by=list(partition)).label(f"n_{name}"))
    return facts_select.add_columns(*windows).subquery("ranked")


def percentile(rows: Any, name: str, fraction: float, postgres: bool) -> sa.ColumnElement[float]:
    """The continuous percentile (interpolated between the ranks around fraction x (n - 1)) of a measure."""
    if postgres:
        return sa.func.percentile_cont(sa.literal_column(repr(fraction))).within_group(rows.c[name])
    value, rank, count = rows.c[name], rows.c[f"rn_{name}"], rows.c[f"n_{name}"]
    position = sa.literal_column(repr(fraction)) * (count - 1)
    low = sa.cast(position, sa.Integer)  # truncation: the floor of a position that is not negative
    high = low + sa.case((position > low, 1), else_=0)
    first = sa.func.max(sa.case((rank == low + 1, value)))
    second = sa.func.max(sa.case((rank == high + 1, value)))
    return first + (second - first) * sa.func.max(position - low)


def summary_statement(organization_id: str, window: TimeRange, scope: Scope, postgres: bool) -> sa.Select[Any]:
    base = facts(organization_id, window, postgres, *scoped(organization_id, scope))
    rows = base.subquery("facts") if postgres else ranked(base, ("duration", "wait"), ())
    columns: list[Any] = [
        *status_counts(rows),
        *(percentile(rows, "duration", q, postgres).label(f"duration_{n}") for n, q in PERCENTILES.items()),
        *(percentile(rows, "wait", q, postgres).label(f"wait_{n}") for n, q in (("p50", 0.5), ("p95", 0.95))),
        sa.func.sum(rows.c.prompt_tokens).label("prompt_tokens"),
        sa.func.sum(rows.c.completion_tokens).label("completion_tokens"),
        sa.func.sum(rows.c.cost).label("cost"),
    ]
    return sa.select(*columns)


PERCENTILES = {"p50": 0.5, "p95": 0.95, "p99": 0.99}


def _bucket(bucket: Bucket, postgres: bool) -> sa.ColumnElement[Any]:
    if postgres:
        return sa.func.date_trunc(bucket.value, e.c.created_at, "UTC", type_=sa.DateTime(timezone=True))
    form = "%Y-%m-%d %H:00:00" if bucket is Bucket.HOUR else "%Y-%m-%d 00:00:00"
    return sa.func.strftime(form, e.c.created_at)


GROUPS: dict[GroupBy, Of] = {
    GroupBy.AGENT: lambda agent: e.c.agent_id,
    GroupBy.TEAM: team_of,
    GroupBy.MODEL: lambda agent: agent.c.model,
    GroupBy.STATUS: lambda agent: e.c.status,
}


def timeseries_statement(
    organization_id: str, window: TimeRange, metric: Metric, bucket: Bucket, group_by: GroupBy | None, postgres: bool
) -> sa.Select[Any]:
    group = GROUPS[group_by] if group_by is not None else lambda agent: sa.null()
    base = facts(organization_id, window, postgres, start=lambda agent: _bucket(bucket, postgres), group=group)
    if metric is Metric.DURATION_P95:
        rows: Any = base.subquery("facts") if postgres else ranked(base, ("duration",), ("start", "group"))
        value: sa.ColumnElement[Any] = percentile(rows, "duration", 0.95, postgres)
    else:
        rows = base.subquery("facts")
        value = {
            Metric.EXECUTIONS: sa.func.count(),
            Metric.TOKENS: sa.func.sum(
                sa.func.coalesce(rows.c.prompt_tokens, 0) + sa.func.coalesce(rows.c.completion_tokens, 0)
            ),
            Metric.COST: sa.func.sum(rows.c.cost),
        }[metric]
    return sa.select(rows.c.start, rows.c.group, value.label("value")).group_by(rows.c.start, rows.c.group)


def agents_statement(organization_id: str, window: TimeRange, order_by: AgentOrder, postgres: bool) -> sa.Select[Any]:
    has_agent = e.c.agent_id.isnot(None)  # the partial index of agents' executions
    base = facts(organization_id, window, postgres, has_agent, name=lambda agent: agent.c.name)
    rows = base.subquery("facts") if postgres else ranked(base, ("duration",), ("agent_id",))
    finished = sa.func.count().filter(rows.c.status.in_([_literal(status) for status in sorted(FINISHED)]))
    failed = sa.func.count().filter(rows.c.status.in_([_literal(status) for status in sorted(FAILED)]))
    cost = sa.func.coalesce(sa.func.sum(rows.c.cost), sa.literal_column("0.0", sa.Float))
    rank = {
        AgentOrder.EXECUTIONS: sa.func.count(),
        AgentOrder.COST: cost,
        AgentOrder.FAILURE_RATE: sa.cast(failed, sa.Float) / sa.func.nullif(finished, 0),
    }[order_by]
    return (
        sa.select(
            rows.c.agent_id,
            sa.func.max(rows.c.name).label("name"),
            *status_counts(rows),
            percentile(rows, "duration", 0.5, postgres).label("duration_p50"),
            percentile(rows, "duration", 0.95, postgres).label("duration_p95"),
            sa.func.sum(rows.c.prompt_tokens).label("prompt_tokens"),
            sa.func.sum(rows.c.completion_tokens).label("completion_tokens"),
            cost.label("cost"),
        )
        .group_by(rows.c.agent_id)
        .order_by(rank.desc().nulls_last(), rows.c.agent_id.collate("C") if postgres else rows.c.agent_id)
    )
