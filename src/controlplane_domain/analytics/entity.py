"""Analytics: what is asked (a time range, filters, a metric) and what is answered (counts, percentiles, tokens,
cost), with the definitions every store computes the same way (docs/analytics.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from controlplane_domain.executions.entity import ExecutionStatus

MAX_RANGE = timedelta(days=400)
MAX_BUCKETS = 10_000
MAX_POINTS = 100_000
"""A time series answers at most this many points (series x buckets), else 422: narrow the range or the groups."""
DEFAULT_RANGE = timedelta(days=30)
"""Without `from`, the range starts this long before `to` (whose default is now)."""

S = ExecutionStatus
SUCCEEDED = S.COMPLETED
FAILED = frozenset({S.FAILED, S.TIMED_OUT})
FINISHED = frozenset({S.COMPLETED, S.FAILED, S.CANCELLED, S.TIMED_OUT})
"""Success rate: completed / finished; failure rate: (failed + timed out) / finished; cancelled is neither."""


class Metric(StrEnum):
    EXECUTIONS = "executions"
    TOKENS = "tokens"
    COST = "cost"
    DURATION_P95 = "duration_p95"


class Bucket(StrEnum):
    HOUR = "hour"
    DAY = "day"

    @property
    def size(self) -> timedelta:
        return timedelta(hours=1) if self is Bucket.HOUR else timedelta(days=1)

    def floor(self, moment: datetime) -> datetime:
        """The start of the bucket that holds `moment` (UTC)."""
        hour = moment.replace(minute=0, second=0, microsecond=0)
        return hour if self is Bucket.HOUR else hour.replace(hour=0)


class GroupBy(StrEnum):
    AGENT = "agent"
    TEAM = "team"
    MODEL = "model"
    STATUS = "status"


class AgentOrder(StrEnum):
    EXECUTIONS = "executions"
    COST = "cost"
    FAILURE_RATE = "failure_rate"


@dataclass(frozen=True, slots=True)
class TimeRange:
    """Executions created from `start` (included) to `end` (excluded), both UTC."""

    start: datetime
    end: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Scope:
    """Filters of a summary: executions of an agent, of a team (its own and its agents'), of a project's agents
    and teams; None: all."""

    agent_id: str | None = None
    team_id: str | None = None
    project_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Totals:
    """What a store aggregates for a summary (rates are derived from the counts by the use case)."""

    by_status: dict[str, int]
    duration_p50: float | None
    duration_p95: float | None
    duration_p99: float | None
    queue_wait_p50: float | None
    queue_wait_p95: float | None
    prompt_tokens: int
    completion_tokens: int
    cost: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    window: TimeRange
    total: int
    success_rate: float | None
    failure_rate: float | None
    totals: Totals


@dataclass(frozen=True, slots=True)
class SeriesRow:
    """One (bucket, group) of a time series that has executions, as a store answers it."""

    start: datetime
    group: str | None
    value: float | int | None


@dataclass(frozen=True, slots=True)
class Point:
    start: datetime
    value: float | int | None


@dataclass(frozen=True, slots=True)
class Series:
    group: str | None
    points: list[Point]


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeseries:
    window: TimeRange
    metric: Metric
    bucket: Bucket
    group_by: GroupBy | None
    series: list[Series]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRow:
    """One agent's executions in a range (the executions that target it), as a store answers it."""

    agent_id: str
    name: str | None
    by_status: dict[str, int] = field(default_factory=dict)
    duration_p50: float | None = None
    duration_p95: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    @property
    def executions(self) -> int:
        return sum(self.by_status.values())


def rates(by_status: dict[str, int]) -> tuple[float | None, float | None]:
    """(success rate, failure rate) of some executions' counts by status; None when none finished."""
    finished = sum(by_status.get(status.value, 0) for status in FINISHED)
    if not finished:
        return None, None
    failed = sum(by_status.get(status.value, 0) for status in FAILED)
    return by_status.get(SUCCEEDED.value, 0) / finished, failed / finished
