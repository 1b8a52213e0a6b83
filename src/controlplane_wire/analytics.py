"""Analytics wire types: a summary, a time series, the ranked agents."""

from __future__ import annotations

from datetime import datetime

import msgspec


class Percentiles(msgspec.Struct, kw_only=True):
    """Seconds; null when no execution has the measure."""

    p50: float | None
    p95: float | None
    p99: float | None = None


class Tokens(msgspec.Struct, kw_only=True):
    prompt: int
    completion: int
    total: int


class Period(msgspec.Struct, kw_only=True):
    """The period an answer covers (`from`, `to`): its first fields."""

    from_: datetime = msgspec.field(name="from")
    to: datetime


class AnalyticsSummary(Period, kw_only=True):
    executions: int
    by_status: dict[str, int]
    success_rate: float | None
    failure_rate: float | None
    duration_seconds: Percentiles
    queue_wait_seconds: Percentiles
    tokens: Tokens
    cost: float


class TimeseriesPoint(msgspec.Struct, kw_only=True):
    start: datetime
    value: float | None
    """A count or a sum of tokens is a whole number; cost and duration_p95 are not; null: no duration."""


class TimeseriesSeries(msgspec.Struct, kw_only=True):
    group: str | None
    points: list[TimeseriesPoint]


class AnalyticsTimeseries(Period, kw_only=True):
    metric: str
    bucket: str
    group_by: str | None
    series: list[TimeseriesSeries]


class AgentAnalytics(msgspec.Struct, kw_only=True):
    agent_id: str
    name: str | None
    executions: int
    by_status: dict[str, int]
    success_rate: float | None
    failure_rate: float | None
    duration_seconds: Percentiles
    tokens: Tokens
    cost: float


class AgentAnalyticsList(Period, kw_only=True):
    order_by: str
    items: list[AgentAnalytics]
    total: int
    limit: int
    offset: int
