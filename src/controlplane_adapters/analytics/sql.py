"""Analytics in SQL: each call is one statement of `queries.py`, its rows converted to the domain's answers."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from controlplane_adapters.analytics.queries import (
    STATUSES,
    agents_statement,
    summary_statement,
    timeseries_statement,
)
from controlplane_adapters.sql.base import SqlConnection
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


def _int(value: Any) -> int:
    return 0 if value is None else int(value)  # a bigint's sum is numeric (a Decimal) on Postgres


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _by_status(row: Any) -> dict[str, int]:
    return {status: _int(getattr(row, f"n_{status}")) for status in STATUSES}


def _start(value: Any) -> datetime:
    """A bucket's start: a datetime from Postgres, SQLite's text ('2026-03-01 12:00:00') otherwise; UTC."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class SqlAnalyticsRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection

    @property
    def _postgres(self) -> bool:
        return self.connection.dialect.name == "postgresql"

    async def summary(self, organization_id: str, window: TimeRange, scope: Scope) -> Totals:
        statement = summary_statement(organization_id, window, scope, self._postgres)
        (row,) = await self.connection.execute_within(
            statement, None, organization_id=organization_id
        )  # (off SQLite's loop: every execution read)
        return Totals(
            by_status=_by_status(row),
            duration_p50=_float(row.duration_p50),
            duration_p95=_float(row.duration_p95),
            duration_p99=_float(row.duration_p99),
            queue_wait_p50=_float(row.wait_p50),
            queue_wait_p95=_float(row.wait_p95),
            prompt_tokens=_int(row.prompt_tokens),
            completion_tokens=_int(row.completion_tokens),
            cost=_float(row.cost) or 0.0,
        )

    async def timeseries(
        self, organization_id: str, window: TimeRange, metric: Metric, bucket: Bucket, group_by: GroupBy | None
    ) -> list[SeriesRow]:
        statement = timeseries_statement(organization_id, window, metric, bucket, group_by, self._postgres)
        convert = _int if metric in (Metric.EXECUTIONS, Metric.TOKENS) else _float
        rows = await self.connection.execute_within(statement, None, organization_id=organization_id)
        return [SeriesRow(_start(row.start), row.group, convert(row.value)) for row in rows]

    async def agents(self, organization_id: str, window: TimeRange, order_by: AgentOrder) -> list[AgentRow]:
        rows = await self.connection.execute_within(
            agents_statement(organization_id, window, order_by, self._postgres), None, organization_id=organization_id
        )
        return [
            AgentRow(
                agent_id=row.agent_id,
                name=row.name,
                by_status=_by_status(row),
                duration_p50=_float(row.duration_p50),
                duration_p95=_float(row.duration_p95),
                prompt_tokens=_int(row.prompt_tokens),
                completion_tokens=_int(row.completion_tokens),
                cost=_float(row.cost) or 0.0,
            )
            for row in rows
        ]
