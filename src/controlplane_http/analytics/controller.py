"""Analytics: a summary, a time series and the ranked agents of a time range (docs/analytics.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from litestar import Controller, get
from litestar.params import Parameter, QueryParameter
from litestar.types import Scope

from controlplane_domain.analytics import usecases
from controlplane_domain.analytics.entity import AgentOrder, AgentRow, Bucket, GroupBy, Metric, TimeRange, rates
from controlplane_domain.analytics.entity import Scope as Filters
from controlplane_domain.errors import ValidationFailed
from controlplane_http.area import HttpArea
from controlplane_http.handlers import Limit, Offset, caller, errors, page_request
from controlplane_wire.analytics import (
    AgentAnalytics,
    AgentAnalyticsList,
    AnalyticsSummary,
    AnalyticsTimeseries,
    Percentiles,
    TimeseriesPoint,
    TimeseriesSeries,
    Tokens,
)

DATE_TIME = {"format": "date-time"}
From = Annotated[
    str | None,
    QueryParameter(name="from", description="start of the range, included (ISO 8601; UTC when without an offset); "
                   "default: 30 days before `to`", schema_extra=DATE_TIME),
]  # fmt: skip
To = Annotated[
    str | None,
    QueryParameter(name="to", description="end of the range, excluded; default: now", schema_extra=DATE_TIME),
]
Id = Annotated[str | None, Parameter(description="only this object's executions")]


def _moment(name: str, text: str | None) -> datetime | None:
    """A query's date and time (ISO 8601; `Z` or an offset, else UTC); 422 on the parameter's own name."""
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise ValidationFailed(name, "must be an ISO 8601 date and time, e.g. 2026-03-01T00:00:00Z", "query") from None


def _window(start: str | None, end: str | None, now: datetime) -> TimeRange:
    return usecases.time_range(_moment("from", start), _moment("to", end), now)


def _tokens(prompt: int, completion: int) -> Tokens:
    return Tokens(prompt=prompt, completion=completion, total=prompt + completion)


def agent_out(row: AgentRow) -> AgentAnalytics:
    success, failure = rates(row.by_status)
    return AgentAnalytics(
        agent_id=row.agent_id,
        name=row.name,
        executions=row.executions,
        by_status=row.by_status,
        success_rate=success,
        failure_rate=failure,
        duration_seconds=Percentiles(p50=row.duration_p50, p95=row.duration_p95),
        tokens=_tokens(row.prompt_tokens, row.completion_tokens),
        cost=row.cost,
    )


class AnalyticsController(Controller):
    path = "/api/v1/analytics"
    tags = ["analytics"]

    @get("/summary", operation_id="getAnalyticsSummary", responses=errors())
    async def summary(
        self,
        scope: Scope,
        start: From = None,
        end: To = None,
        agent_id: Id = None,
        team_id: Id = None,
        project_id: Id = None,
    ) -> AnalyticsSummary:
        """Executions created in the range: counts by status, rates, duration and queue wait percentiles, tokens,
        cost (a team's: its executions and its agents'; a project's: its agents' and teams')."""
        ports, principal = caller(scope)
        window = _window(start, end, ports.clock.now())
        filters = Filters(agent_id=agent_id, team_id=team_id, project_id=project_id)
        answer = await usecases.summary(ports, principal.organization_id, window, filters)
        totals = answer.totals
        return AnalyticsSummary(
            from_=window.start,
            to=window.end,
            executions=answer.total,
            by_status=totals.by_status,
            success_rate=answer.success_rate,
            failure_rate=answer.failure_rate,
            duration_seconds=Percentiles(p50=totals.duration_p50, p95=totals.duration_p95, p99=totals.duration_p99),
            queue_wait_seconds=Percentiles(p50=totals.queue_wait_p50, p95=totals.queue_wait_p95),
            tokens=_tokens(totals.prompt_tokens, totals.completion_tokens),
            cost=totals.cost,
        )

    @get("/timeseries", operation_id="getAnalyticsTimeseries", responses=errors())
    async def timeseries(
        self,
        scope: Scope,
        metric: Annotated[Metric, Parameter(description="what each point counts")] = Metric.EXECUTIONS,
        bucket: Annotated[Bucket, Parameter(description="UTC hours or days")] = Bucket.DAY,
        start: From = None,
        end: To = None,
        group_by: Annotated[GroupBy | None, Parameter(description="one series a group")] = None,
    ) -> AnalyticsTimeseries:
        """Every bucket of the range in each series: 0 where nothing ran (null for `duration_p95`)."""
        ports, principal = caller(scope)
        window = _window(start, end, ports.clock.now())
        answer = await usecases.timeseries(ports, principal.organization_id, window, metric, bucket, group_by)
        return AnalyticsTimeseries(
            from_=window.start,
            to=window.end,
            metric=metric.value,
            bucket=bucket.value,
            group_by=group_by.value if group_by is not None else None,
            series=[
                TimeseriesSeries(
                    group=series.group,
                    points=[TimeseriesPoint(start=point.start, value=point.value) for point in series.points],
                )
                for series in answer.series
            ],
        )

    @get("/agents", operation_id="listAgentAnalytics", responses=errors())
    async def agents(
        self,
        scope: Scope,
        start: From = None,
        end: To = None,
        order_by: Annotated[AgentOrder, Parameter(description="ranked by this, descending")] = AgentOrder.EXECUTIONS,
        limit: Limit = 50,
        offset: Offset = 0,
    ) -> AgentAnalyticsList:
        """The agents with executions in the range (those that target them), ranked; ties by agent id."""
        ports, principal = caller(scope)
        window = _window(start, end, ports.clock.now())
        page = await usecases.ranked_agents(
            ports, principal.organization_id, window, order_by, page_request(limit, offset)
        )
        return AgentAnalyticsList(
            from_=window.start,
            to=window.end,
            order_by=order_by.value,
            items=[agent_out(row) for row in page.items],
            total=page.total,
            limit=page.limit,
            offset=page.offset,
        )


AREA = HttpArea((AnalyticsController,))
