"""`make bench`'s orchestration scenarios, against the real server process (`controlplane serve`):

- **cron jobs due at once**: N cron jobs (`* * * * *`) are created through the API, then their `next_run_at` is
  set, in the database, to one instant two seconds ahead (rather than waiting up to a minute for the next minute
  boundary: the scheduler reads nothing else). The server's own scheduler (every node's, real time, its default
  1 s tick) fires them; each firing's latency is its execution's `queued_at` minus the job run's `scheduled_for`
  (the due time), both written by the server. A tick starts anywhere within its interval after the due time, so
  the first firing's latency is that phase; the rest is the scheduler's work. The jobs are disabled after.
- **workflow step hand-over**: K runs at once of a chain of S steps, each run on a queue of its own served by one
  client that leases (long poll) and completes at once. The next step's execution is queued in the completion's
  own transaction (`queued_at` = the previous step's `finished_at`), so it is leasable once the completion's
  answer is sent; measured: from sending the completion to receiving the lease of the next step (the completion,
  then a lease round trip), and the server's own `finished_at` -> next `started_at`."""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import sqlalchemy as sa

from benchmarks.run import KEY, Result, _pct

CREATE_CONCURRENCY = 8


def _headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {KEY}"}


def _queue(client: httpx.Client, environment: str, name: str) -> str:
    created = client.post(f"/api/v1/environments/{environment}/worker-queues", json={"name": name})
    return str(created.raise_for_status().json()["id"])


async def _create_jobs(base: str, count: int, agent: str, queue: str, tag: str) -> list[str]:
    ids: list[str] = []
    async with httpx.AsyncClient(base_url=base, headers=_headers(), timeout=60) as client:

        async def creator(first: int) -> None:
            for index in range(first, count, CREATE_CONCURRENCY):
                body = {"name": f"cron-{tag}-{index}", "trigger": {"type": "cron", "cron": "* * * * *"},
                        "target": {"agent_id": agent}, "prompt": "cron bench", "worker_queue_id": queue}  # fmt: skip
                response = await client.post("/api/v1/jobs", json=body)
                ids.append(response.raise_for_status().json()["id"])

        await asyncio.gather(*(creator(first) for first in range(CREATE_CONCURRENCY)))
    return ids


async def _fire_at_once(database_url: str, ids: list[str], due: datetime, patience: float) -> list[tuple[Any, ...]]:
    """Make every job due at `due`, wait until each fired, then disable them all; (scheduled_for, fired_at,
    queued_at) of each firing."""
    from controlplane_adapters.executions.table import executions
    from controlplane_adapters.jobs.sql import job_runs, jobs
    from controlplane_adapters.sql.engine import create_engine

    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(jobs.update().where(jobs.c.id.in_(ids)).values(next_run_at=due))
        deadline = time.monotonic() + patience
        count = sa.select(sa.func.count()).select_from(job_runs).where(job_runs.c.job_id.in_(ids))
        while True:
            async with engine.connect() as connection:
                fired = (await connection.execute(count)).scalar_one()
            if fired >= len(ids) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        async with engine.begin() as connection:  # no firing next minute, while later scenarios run
            await connection.execute(jobs.update().where(jobs.c.id.in_(ids)).values(enabled=False, next_run_at=None))
        query = (
            sa.select(job_runs.c.scheduled_for, job_runs.c.fired_at, executions.c.queued_at)
            .select_from(job_runs.join(executions, executions.c.id == job_runs.c.execution_id))
            .where(job_runs.c.job_id.in_(ids), job_runs.c.scheduled_for == due)
        )
        async with engine.connect() as connection:
            return [tuple(row) for row in await connection.execute(query)]
    finally:
        await engine.dispose()


def cron_due(base: str, database_url: str, count: int, seeded: dict[str, str], interval_ms: int) -> Result:
    tag = uuid.uuid4().hex[:8]
    with httpx.Client(base_url=base, headers=_headers(), timeout=30) as client:
        queue = _queue(client, seeded["environment"], f"cron-{tag}")
    started = time.monotonic()
    ids = asyncio.run(_create_jobs(base, count, seeded["agent"], queue, tag))
    created = time.monotonic() - started
    due = (datetime.now(UTC) + timedelta(seconds=2)).replace(microsecond=0)
    rows = asyncio.run(_fire_at_once(database_url, ids, due, patience=120))
    latencies = sorted((queued - scheduled).total_seconds() * 1000 for scheduled, _, queued in rows)
    first, last = (latencies[0], latencies[-1]) if latencies else (float("nan"), float("nan"))
    drain = (last - first) / 1000
    note = (f"{len(rows)} of {count} fired; due -> queued: first {first:.0f} ms (the tick's phase, a "
            f"{interval_ms} ms tick), last {last:.0f} ms; first -> last firing {drain * 1000:.0f} ms; "
            f"{count} jobs created in {created:.1f} s")  # fmt: skip
    rate = (len(rows) - 1) / drain if drain > 0 else float("nan")
    return Result(f"{count} cron jobs due at once: due -> queued", "", rate, _pct(latencies, 50), _pct(latencies, 99),
                  "firings/s", count - len(rows), note)  # fmt: skip


async def _serve_run(client: httpx.AsyncClient, queue: str, steps: int, worker: str) -> tuple[list[float], list[float]]:
    """Lease and complete each step of one run in turn: (completion sent -> next step leased, the completions'
    own round trips), in ms."""
    hand_overs: list[float] = []
    completions: list[float] = []
    sent: float | None = None
    for _ in range(steps):
        while True:
            response = await client.post(f"/api/v1/worker-queues/{queue}/lease",
                                         json={"worker_id": worker, "wait_seconds": 10})  # fmt: skip
            if response.status_code == 200:
                break
            if response.status_code != 204:
                raise RuntimeError(f"lease: {response.status_code} {response.text[:200]}")
        if sent is not None:
            hand_overs.append((time.perf_counter() - sent) * 1000)
        leased = response.json()
        sent = time.perf_counter()
        done = await client.post(f"/api/v1/executions/{leased['execution']['id']}/complete",
                                 json={"worker_id": worker, "attempt": leased["attempt"], "status": "completed",
                                       "response": "ok"})  # fmt: skip
        completions.append((time.perf_counter() - sent) * 1000)
        done.raise_for_status()
    return hand_overs, completions


async def _hand_overs(base: str, queues: list[str], workflow: str, steps: int) -> tuple[list[float], list[float], str]:
    since = datetime.now(UTC).isoformat()
    limits = httpx.Limits(max_connections=2 * len(queues))
    async with httpx.AsyncClient(base_url=base, headers=_headers(), timeout=60, limits=limits) as client:
        for queue in queues:
            started = await client.post(f"/api/v1/workflows/{workflow}/runs", json={"worker_queue_id": queue})
            started.raise_for_status()
        served = await asyncio.gather(*(_serve_run(client, q, steps, f"w-{n}") for n, q in enumerate(queues)))
    return [v for each, _ in served for v in each], [v for _, each in served for v in each], since


async def _server_stamps(database_url: str, workflow: str) -> tuple[list[float], list[float]]:
    """Per hand-over, from the server's stamps: previous finished_at -> next queued_at, and -> next started_at."""
    from controlplane_adapters.executions.table import executions as t
    from controlplane_adapters.sql.engine import create_engine
    from controlplane_adapters.workflows.sql import workflow_runs as r

    engine = create_engine(database_url)
    try:
        query = (
            sa.select(t.c.workflow_run_id, t.c.queued_at, t.c.started_at, t.c.finished_at)
            .select_from(t.join(r, r.c.id == t.c.workflow_run_id))
            .where(r.c.workflow_id == workflow)
            .order_by(t.c.workflow_run_id, t.c.queued_at, t.c.id)
        )
        async with engine.connect() as connection:
            rows = list(await connection.execute(query))
    finally:
        await engine.dispose()
    to_queued, to_started = [], []
    for before, after in itertools.pairwise(rows):
        if before[0] == after[0] and before[3] is not None and after[2] is not None:
            to_queued.append((after[1] - before[3]).total_seconds() * 1000)
            to_started.append((after[2] - before[3]).total_seconds() * 1000)
    return to_queued, to_started


def hand_over(base: str, database_url: str, runs: int, steps: int, seeded: dict[str, str]) -> Result:
    tag = uuid.uuid4().hex[:8]
    chain = [{"id": "s0", "agent_id": seeded["agent"], "prompt": "start"}] + [
        {"id": f"s{i}", "agent_id": seeded["agent"], "prompt": f"after {{{{steps.s{i - 1}.output}}}}",
         "depends_on": [f"s{i - 1}"]} for i in range(1, steps)
    ]  # fmt: skip
    with httpx.Client(base_url=base, headers=_headers(), timeout=30) as client:
        queues = [_queue(client, seeded["environment"], f"chain-{tag}-{n}") for n in range(runs)]
        created = client.post("/api/v1/workflows", json={"name": f"chain-{tag}", "steps": chain})
        workflow = str(created.raise_for_status().json()["id"])
    started = time.monotonic()
    hand_overs, completions, _ = asyncio.run(_hand_overs(base, queues, workflow, steps))
    elapsed = time.monotonic() - started
    to_queued, to_started = asyncio.run(_server_stamps(database_url, workflow))
    note = (f"{runs} runs at once of a {steps}-step chain, {len(hand_overs)} hand-overs: completion sent -> next "
            f"step leased; the completion's round trip p50 {_pct(completions, 50):.2f} / p99 "
            f"{_pct(completions, 99):.2f} ms; server stamps: finished -> next queued max "
            f"{max(to_queued, default=float('nan')):.2f} ms (one transaction), finished -> next leased p50 "
            f"{_pct(to_started, 50):.2f} / p99 {_pct(to_started, 99):.2f} ms")  # fmt: skip
    return Result("workflow step hand-over", "", len(hand_overs) / elapsed, _pct(hand_overs, 50), _pct(hand_overs, 99),
                  "hand-overs/s", 0, note)  # fmt: skip
