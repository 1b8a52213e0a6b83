"""The analytics read model's port: each call is one aggregate query in a SQL store."""

from __future__ import annotations

from typing import Protocol

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
)


class AnalyticsRepository(Protocol):
    async def summary(self, organization_id: str, window: TimeRange, scope: Scope) -> Totals: ...

    async def timeseries(
        self, organization_id: str, window: TimeRange, metric: Metric, bucket: Bucket, group_by: GroupBy | None
    ) -> list[SeriesRow]:
        """The (bucket, group) pairs that have executions, in no set order."""
        ...

    async def agents(self, organization_id: str, window: TimeRange, order_by: AgentOrder) -> list[AgentRow]:
        """Every agent with executions in the range, ranked: the order's value descending (an agent with no
        finished execution has no failure rate and comes last), then agent id."""
        ...
