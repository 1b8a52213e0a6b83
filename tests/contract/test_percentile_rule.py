"""Percentiles have one definition, the domain's (`analytics.facts.percentile`, the continuous percentile); each
SQL database computes it in its strategy (`controlplane_adapters/analytics/queries.py` `percentile`:
`percentile_cont` on Postgres, window ranks on SQLite), held to the domain's here: on every store, for any
durations and queue waits, the summary's percentiles are what `percentile` computes of them."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controlplane_domain.analytics.entity import Scope, TimeRange
from controlplane_domain.analytics.facts import percentile
from tests.contract.conftest import UowFactory
from tests.contract.test_analytics import DAY, T0, S, execution


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    runs=st.lists(
        st.tuples(st.integers(0, 10**6), st.integers(0, 10**5), st.booleans()), max_size=12
    ),  # (duration, wait in milliseconds, finished)
)
async def test_property_the_summarys_percentiles_are_the_domains_on_every_store(
    uow: UowFactory, runs: list[tuple[int, int, bool]]
) -> None:
    org = f"org-{uuid.uuid4().hex[:12]}"
    made = [
        execution(f"e{n}", S.COMPLETED if finished else S.RUNNING, timedelta(minutes=n), team_id=f"{org}-team",
                  wait=wait / 1000, duration=duration / 1000 if finished else None, org=org)
        for n, (duration, wait, finished) in enumerate(runs)
    ]  # fmt: skip
    async with uow() as work:
        for each in made:
            assert await work.executions.record(None, each, [])
        await work.commit()
    async with uow() as work:
        totals = await work.analytics.summary(org, TimeRange(T0, T0 + DAY), Scope())
    durations = sorted(duration / 1000 for duration, _, finished in runs if finished)
    waits = sorted(wait / 1000 for _, wait, _ in runs)
    expected = [percentile(durations, q) for q in (0.5, 0.95, 0.99)] + [percentile(waits, q) for q in (0.5, 0.95)]
    found = [totals.duration_p50, totals.duration_p95, totals.duration_p99, totals.queue_wait_p50,
             totals.queue_wait_p95]  # fmt: skip
    assert [value is None for value in found] == [value is None for value in expected]
    assert [value for value in found if value is not None] == pytest.approx(
        [value for value in expected if value is not None], rel=1e-9, abs=1e-6
    )
