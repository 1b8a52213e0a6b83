"""Analytics use cases: a summary, a time series and the ranked agents of a time range, each one read."""

from __future__ import annotations

from datetime import UTC, datetime

from controlplane_domain.analytics.entity import (
    DEFAULT_RANGE,
    MAX_BUCKETS,
    MAX_POINTS,
    MAX_RANGE,
    AgentOrder,
    AgentRow,
    Bucket,
    GroupBy,
    Metric,
    Point,
    Scope,
    Series,
    Summary,
    TimeRange,
    Timeseries,
    rates,
)
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.ports import Ports

EARLIEST = datetime(1971, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 1, 1, tzinfo=UTC)


def _utc(name: str, moment: datetime) -> datetime:
    """A time in UTC (a time zone-less time is UTC), from 1971 to 9998."""
    try:
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except OverflowError:  # the first or last hours of years 1 and 9999, moved to UTC
        moment = LATEST
    if not EARLIEST <= moment < LATEST:
        raise ValidationFailed(name, f"must be from {EARLIEST.year} to {LATEST.year - 1}", "query")
    return moment


def time_range(start: datetime | None, end: datetime | None, now: datetime) -> TimeRange:
    """The range asked: `to` defaults to now, `from` to DEFAULT_RANGE before `to`; at most MAX_RANGE long."""
    end = _utc("to", end) if end is not None else now
    start = _utc("from", start) if start is not None else end - DEFAULT_RANGE
    if start >= end:
        raise ValidationFailed("from", "must be before `to`", "query")
    if end - start > MAX_RANGE:
        raise ValidationFailed("from", f"the range may span at most {MAX_RANGE.days} days", "query")
    return TimeRange(start, end)


def bucket_starts(window: TimeRange, bucket: Bucket) -> list[datetime]:
    """The starts of the buckets that overlap the range, at most MAX_BUCKETS (422 beyond)."""
    first, size = bucket.floor(window.start), bucket.size
    count = -(-(window.end - first) // size)  # ceiling
    if count > MAX_BUCKETS:
        raise ValidationFailed("bucket", f"the range holds {count} buckets, at most {MAX_BUCKETS}", "query")
    return [first + index * size for index in range(count)]


async def summary(ports: Ports, organization_id: str, window: TimeRange, scope: Scope) -> Summary:
    async with ports.read() as uow:
        totals = await uow.analytics.summary(organization_id, window, scope)
    success, failure = rates(totals.by_status)
    return Summary(
        window=window,
        total=sum(totals.by_status.values()),
        success_rate=success,
        failure_rate=failure,
        totals=totals,
    )


async def timeseries(
    ports: Ports, organization_id: str, window: TimeRange, metric: Metric, bucket: Bucket, group_by: GroupBy | None
) -> Timeseries:
    """One series a group (one series without `group_by`), each with every bucket of the range: a bucket without
    executions is 0, or null for a percentile."""
    starts = bucket_starts(window, bucket)
    async with ports.read() as uow:
        rows = await uow.analytics.timeseries(organization_id, window, metric, bucket, group_by)
    values: dict[str | None, dict[datetime, float | int | None]] = {} if group_by else {None: {}}
    for row in rows:
        values.setdefault(row.group, {})[row.start] = row.value
    if len(values) * len(starts) > MAX_POINTS:
        raise ValidationFailed(
            "group_by", f"{len(values)} series of {len(starts)} buckets: more than {MAX_POINTS} points", "query"
        )
    empty = None if metric is Metric.DURATION_P95 else 0
    series = [
        Series(group, [Point(start, points.get(start, empty)) for start in starts])
        for group, points in sorted(values.items(), key=lambda item: (item[0] is None, item[0] or ""))
    ]
    return Timeseries(window=window, metric=metric, bucket=bucket, group_by=group_by, series=series)


async def ranked_agents(
    ports: Ports, organization_id: str, window: TimeRange, order_by: AgentOrder, page: PageRequest
) -> Page[AgentRow]:
    """The agents with executions in the range, ranked by `order_by` (descending, then agent id)."""
    async with ports.read() as uow:
        rows = await uow.analytics.agents(organization_id, window, order_by)
    return Page(
        items=rows[page.offset : page.offset + page.limit], total=len(rows), limit=page.limit, offset=page.offset
    )
