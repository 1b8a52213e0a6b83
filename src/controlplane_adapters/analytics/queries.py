"""The analytics statements, one a call: the executions of a range with what each was run with (`facts`: no
join, the execution carries its model, prices and team), aggregated by the database. Percentiles are the domain's
definition (`analytics.facts.percentile`), in each database's strategy: Postgres's `percentile_cont` (kept for
its speed: one sort a measure, where the window ranks cost the summary several times as long,
docs/benchmarks.md), on SQLite window ranks (`ranked`, `percentile`); `tests/contract/test_percentile_rule.py`, a
property test on every store, holds both to the domain's. Buckets: `date_trunc` on Postgres, `strftime` on
SQLite."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.executions.table import executions
from controlplane_adapters.projects.sql import project_agents, project_teams
from controlplane_domain.analytics.entity import FAILED, FINISHED, AgentOrder, Bucket, GroupBy, Metric, Scope, TimeRange
from controlplane_domain.executions.entity import ExecutionStatus

e = executions
STATUSES = tuple(status.value for status in ExecutionStatus)
MILLION = sa.literal_column("1000000.0", sa.Float)


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
    """One row an execution of the organization created in the range (and `where`): what analytics counts, from
    the execution alone (what it was run with is on it: its model, prices and names never change later). `extra`
    columns are expressions of the executions."""

    def priced(tokens: sa.ColumnElement[int], price: sa.ColumnElement[float]) -> sa.ColumnElement[float]:
        return sa.func.coalesce(tokens * price, sa.literal_column("0.0", sa.Float))

    cost = priced(e.c.prompt_tokens, e.c.input_cost_per_million) + priced(
        e.c.completion_tokens, e.c.output_cost_per_million
    )
    return sa.select(
        e.c.status,
        e.c.agent_id,
        e.c.prompt_tokens,
        e.c.completion_tokens,
        _seconds(e.c.started_at, e.c.finished_at, postgres).label("duration"),
        _seconds(e.c.queued_at, e.c.started_at, postgres).label("wait"),
        (cost / MILLION).label("cost"),
        *(value.label(name) for name, value in extra.items()),
    ).where(
        e.c.organization_id == organization_id,
        e.c.created_at >= window.start,
        e.c.created_at < window.end,
        *where,
    )


TEAM = sa.func.coalesce(e.c.team_id, e.c.agent_team_id)
"""An execution's team: the team it targets, else its agent's team when it was run."""


def _of_teams(teams: Any) -> sa.ColumnElement[bool]:
    """The executions whose team (`TEAM`) is in `teams` (a SELECT of team ids): the team's own executions (the
    index of teams' executions), and those of its agents then."""
    return sa.or_(e.c.team_id.in_(teams), sa.and_(e.c.team_id.is_(None), e.c.agent_team_id.in_(teams)))


def scoped(organization_id: str, scope: Scope) -> list[sa.ColumnElement[bool]]:
    """The summary's filters: an agent, a team (an execution's team as `TEAM`), a project's agents and teams
    (the project's members now: a project groups, it does not run)."""
    where: list[sa.ColumnElement[bool]] = []
    if scope.agent_id is not None:
        where.append(e.c.agent_id == scope.agent_id)
    if scope.team_id is not None:
        where.append(_of_teams(sa.select(sa.literal(scope.team_id))))
    if scope.project_id is not None:
        pa, pt = project_agents, project_teams
        held_agents = sa.select(pa.c.agent_id).where(pa.c.organization_id == organization_id,
                                                     pa.c.project_id == scope.project_id)  # fmt: skip
        held_teams = sa.select(pt.c.team_id).where(pt.c.organization_id == organization_id,
                                                   pt.c.project_id == scope.project_id)  # fmt: skip
        where.append(sa.or_(e.c.agent_id.in_(held_agents), _of_teams(held_teams)))
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


GROUPS: dict[GroupBy, sa.ColumnElement[Any]] = {
    GroupBy.AGENT: e.c.agent_id,
    GroupBy.TEAM: TEAM,
    GroupBy.MODEL: e.c.model,
    GroupBy.STATUS: e.c.status,
}


def timeseries_statement(
    organization_id: str, window: TimeRange, metric: Metric, bucket: Bucket, group_by: GroupBy | None, postgres: bool
) -> sa.Select[Any]:
    group = GROUPS[group_by] if group_by is not None else sa.null()
    base = facts(organization_id, window, postgres, start=_bucket(bucket, postgres), group=group)
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


def _last_name(organization_id: str, window: TimeRange, agent_id: Any, postgres: bool) -> sa.ScalarSelect[Any]:
    """The agent's name as its last execution of the range was run with (the index of agents' executions)."""
    last = e.alias("last")
    return (
        sa.select(last.c.target_name)
        .where(
            last.c.organization_id == organization_id,
            last.c.agent_id == agent_id,
            last.c.created_at >= window.start,
            last.c.created_at < window.end,
        )
        .order_by(last.c.created_at.desc(), (last.c.id.collate("C") if postgres else last.c.id).desc())
        .limit(1)
        .scalar_subquery()
    )


def agents_statement(organization_id: str, window: TimeRange, order_by: AgentOrder, postgres: bool) -> sa.Select[Any]:
    has_agent = e.c.agent_id.isnot(None)  # the partial index of agents' executions
    base = facts(organization_id, window, postgres, has_agent)
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
            _last_name(organization_id, window, rows.c.agent_id, postgres).label("name"),
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
