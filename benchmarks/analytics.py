"""Analytics on a large organization: each call's time over 100,000 executions (docs/benchmarks.md, "Analytics").

Seeds one organization (50 agents in 5 teams, 6 models, a project; executions over 60 days: agents' and teams',
every status, tokens on finished ones) plus a second organization of 20,000 executions, by COPY on Postgres
(executemany on SQLite), ANALYZEs, then times each analytics use case (the statement and the conversion of its
rows; the HTTP layer adds well under a millisecond) `--runs` times after two warm-up calls:

    .venv/bin/python -m benchmarks.analytics                       # Postgres on 127.0.0.1, a database per run
    .venv/bin/python -m benchmarks.analytics --postgres-url postgresql+asyncpg://postgres@host/postgres
    .venv/bin/python -m benchmarks.analytics --sqlite              # the same on a SQLite file
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.agents.sql import agents as agents_table
from controlplane_adapters.clock import SystemClock, UuidGenerator
from controlplane_adapters.executions.table import executions as executions_table
from controlplane_adapters.llm_models.sql import llm_models
from controlplane_adapters.projects.sql import project_agents, project_teams, projects
from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_adapters.teams.sql import teams as teams_table
from controlplane_domain.analytics import usecases
from controlplane_domain.analytics.entity import AgentOrder, Bucket, GroupBy, Metric, Scope, TimeRange
from controlplane_domain.paging import PageRequest
from controlplane_domain.ports import Ports

ORG, OTHER = "bench-org", "other-org"
NOW = datetime(2026, 11, 1, tzinfo=UTC)
SPAN = timedelta(days=60)
STATUSES = [("completed", 80), ("failed", 8), ("timed_out", 3), ("cancelled", 3), ("running", 3), ("queued", 3)]
MODELS = [("gpt-4o", 2.5, 10.0), ("gpt-4o-mini", 0.15, 0.6), ("claude", 3.0, 15.0), ("llama", 0.2, 0.2),
          ("mistral", 0.25, 0.25), ("unpriced", None, None)]  # fmt: skip


def _base(table: sa.Table, org: str, suffix: str, at: datetime, **values: Any) -> dict[str, Any]:
    row = {"id": f"{org}-{suffix}", "organization_id": org, "created_at": at, "updated_at": at, **values}
    return {column.name: row.get(column.name) for column in table.columns}


def catalog(org: str) -> dict[sa.Table, list[dict[str, Any]]]:
    """Models, teams, agents (half name their model by id, half by value; one in five has none priced) and a
    project holding one team and five agents."""
    at = NOW - SPAN - timedelta(days=1)
    models = [_base(llm_models, org, f"m{i}", at, value=value, label=value, provider="p", enabled=True,
                    compatible_runtimes=["default"], input_cost_per_million=inp, output_cost_per_million=out)
              for i, (value, inp, out) in enumerate(MODELS)]  # fmt: skip
    teams = [_base(teams_table, org, f"t{i}", at, name=f"team-{i}", status="active", runtime="default",
                   configuration={}, skill_ids=None) for i in range(5)]  # fmt: skip
    agents = []
    for i in range(50):
        value = MODELS[i % len(MODELS)][0]
        model_id = f"{org}-m{i % len(MODELS)}" if i % 2 else value
        agents.append(_base(agents_table, org, f"a{i:02d}", at, name=f"agent-{i}", status="active", runtime="default",
                            model_id=model_id, team_id=f"{org}-t{i % 5}", capabilities=[], skill_ids=[],
                            configuration={}))  # fmt: skip
    project = [_base(projects, org, "p", at, name="project", key="P", status="active", settings={})]
    held_agents = [{"project_id": f"{org}-p", "agent_id": f"{org}-a{i:02d}", "organization_id": org, "created_at": at}
                   for i in range(5)]  # fmt: skip
    held_teams = [{"project_id": f"{org}-p", "team_id": f"{org}-t1", "organization_id": org, "created_at": at}]
    return {llm_models: models, teams_table: teams, agents_table: agents, projects: project,
            project_agents: held_agents, project_teams: held_teams}  # fmt: skip


def execution_rows(org: str, count: int, seed: int) -> list[dict[str, Any]]:
    chance = random.Random(seed)
    names, weights = zip(*STATUSES, strict=True)
    rows = []
    for n in range(count):
        created = NOW - SPAN * chance.random()
        status = chance.choices(names, weights)[0]
        team = chance.random() < 0.1
        started = created + timedelta(seconds=chance.expovariate(1 / 3)) if status != "queued" else None
        finished = started + timedelta(seconds=chance.expovariate(1 / 40)) if started and status not in (
            "running", "queued") else None  # fmt: skip
        prompt = chance.randint(100, 5000) if finished else None
        completion = chance.randint(10, 2000) if finished else None
        usage = {"prompt_tokens": prompt, "completion_tokens": completion} if prompt else {}
        agent = None if team else chance.randrange(50)
        team_index = chance.randrange(5) if team else None
        value, inp, out = MODELS[agent % len(MODELS)] if agent is not None else (None, None, None)
        rows.append({
            "id": f"{org}-e{n:07d}", "organization_id": org, "target_type": "team" if team else "agent",
            "agent_id": None if agent is None else f"{org}-a{agent:02d}",
            "team_id": None if team_index is None else f"{org}-t{team_index}", "worker_queue_id": f"{org}-q",
            "prompt": "p", "status": status, "response": None, "error": None, "usage": json.dumps(usage),
            "attempt": 1, "max_attempts": 3, "worker_id": None, "lease_expires_at": None, "cancel_requested": False,
            "last_seq": 2, "created_at": created, "updated_at": finished or created, "queued_at": created,
            "started_at": started, "finished_at": finished, "workflow_run_id": None, "workflow_step_id": None,
            "prompt_tokens": prompt, "completion_tokens": completion, "trace_parent": None,
            # what it was run with (as an execute takes it from the catalog's agent and model, or team)
            "target_name": f"agent-{agent}" if agent is not None else f"team-{team_index}", "model": value,
            "input_cost_per_million": inp, "output_cost_per_million": out,
            "agent_team_id": None if agent is None else f"{org}-t{agent % 5}",
        })  # fmt: skip
    return rows


async def seed(url: str, count: int) -> float:
    """Migrate and fill the database; the seconds the executions' insert took."""
    engine = create_engine(url)
    try:
        await migrate.upgrade(engine)
        async with engine.begin() as connection:
            for org in (ORG, OTHER):
                for table, rows in catalog(org).items():
                    await connection.execute(table.insert(), rows)
        rows = execution_rows(ORG, count, 1) + execution_rows(OTHER, count // 5, 2)
        began = time.perf_counter()
        async with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                raw = (await connection.get_raw_connection()).driver_connection
                assert raw is not None
                columns = [column.name for column in executions_table.columns]
                records = [tuple(row[name] for name in columns) for row in rows]
                await raw.copy_records_to_table("executions", records=records, columns=columns)
            else:
                statement = executions_table.insert()
                for start in range(0, len(rows), 5000):
                    await connection.execute(statement, [{**r, "usage": json.loads(r["usage"])}
                                                         for r in rows[start : start + 5000]])  # fmt: skip
        seconds = time.perf_counter() - began
        async with engine.connect() as connection:
            autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
            await autocommit.execute(sa.text("ANALYZE"))
        return seconds
    finally:
        await engine.dispose()


def calls(window: TimeRange) -> dict[str, Callable[[Ports], Awaitable[Any]]]:
    every = PageRequest(limit=50)

    def series(metric: Metric, bucket: Bucket, group: GroupBy | None) -> Callable[[Ports], Awaitable[Any]]:
        return lambda ports: usecases.timeseries(ports, ORG, window, metric, bucket, group)

    def summary(scope: Scope) -> Callable[[Ports], Awaitable[Any]]:
        return lambda ports: usecases.summary(ports, ORG, window, scope)

    def ranked(order: AgentOrder) -> Callable[[Ports], Awaitable[Any]]:
        return lambda ports: usecases.ranked_agents(ports, ORG, window, order, every)

    return {
        "summary": summary(Scope()),
        "summary agent_id": summary(Scope(agent_id=f"{ORG}-a07")),
        "summary team_id": summary(Scope(team_id=f"{ORG}-t2")),
        "summary project_id": summary(Scope(project_id=f"{ORG}-p")),
        "timeseries executions day": series(Metric.EXECUTIONS, Bucket.DAY, None),
        "timeseries tokens hour": series(Metric.TOKENS, Bucket.HOUR, None),
        "timeseries cost day by model": series(Metric.COST, Bucket.DAY, GroupBy.MODEL),
        "timeseries duration_p95 day by agent": series(Metric.DURATION_P95, Bucket.DAY, GroupBy.AGENT),
        "timeseries executions hour by status": series(Metric.EXECUTIONS, Bucket.HOUR, GroupBy.STATUS),
        "agents by executions": ranked(AgentOrder.EXECUTIONS),
        "agents by cost": ranked(AgentOrder.COST),
        "agents by failure_rate": ranked(AgentOrder.FAILURE_RATE),
    }


def _cpu_ms(pid: int | None) -> float:
    """The CPU time (user + system) a process has used, in milliseconds (Linux's /proc, clock ticks)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def measure(url: str, runs: int, window: TimeRange) -> dict[str, Timing]:
    """Each call's wall time (p50, p99) and mean CPU time (the Postgres backend's, which runs the statement, with
    parallel workers off so that it does all of it; and this process's): wall times on a loaded machine measure
    the load, CPU times the work."""
    engine = create_engine(url, pool_size=1)
    postgres = engine.dialect.name == "postgresql"
    if postgres:

        @sa.event.listens_for(engine.sync_engine, "connect")
        def serial(connection: Any, record: Any) -> None:
            connection.run_async(lambda raw: raw.execute("SET max_parallel_workers_per_gather = 0"))

    ports = Ports(uow=lambda: SqlUnitOfWork(engine), clock=SystemClock(), ids=UuidGenerator())
    results = {}
    try:
        async with engine.connect() as connection:
            backend = (await connection.execute(sa.text("SELECT pg_backend_pid()"))).scalar() if postgres else None
        for name, call in calls(window).items():
            for _ in range(2):
                await call(ports)
            times = []
            server, client = _cpu_ms(backend), time.process_time()
            for _ in range(runs):
                began = time.perf_counter()
                await call(ports)
                times.append((time.perf_counter() - began) * 1000)
            server, client = _cpu_ms(backend) - server, (time.process_time() - client) * 1000
            times.sort()
            p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
            results[name] = Timing(statistics.median(times), p99, server / runs, client / runs)
        async with engine.connect() as connection:
            again = (await connection.execute(sa.text("SELECT pg_backend_pid()"))).scalar() if postgres else None
            assert again == backend, "the calls ran on another connection than the one whose CPU was read"
    finally:
        await engine.dispose()
    return results


@dataclass(frozen=True)
class Timing:
    p50: float
    p99: float
    server_cpu: float
    client_cpu: float


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/postgres",
                        help="an admin URL: a database is created for the run and dropped")  # fmt: skip
    parser.add_argument("--sqlite", action="store_true", help="run on a SQLite file instead")
    parser.add_argument("--executions", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    everything = TimeRange(NOW - SPAN, NOW)
    last_30_days = TimeRange(NOW - timedelta(days=30), NOW)
    with tempfile.TemporaryDirectory() as tmp:
        if args.sqlite:
            url, name = f"sqlite+aiosqlite:///{Path(tmp) / 'analytics.db'}", None
        else:
            from benchmarks.run import drop_postgres, postgres_database

            url, name = postgres_database(args.postgres_url)
        try:
            seconds = asyncio.run(seed(url, args.executions))
            print(f"seeded {args.executions:,} executions (+{args.executions // 5:,} of another organization): "
                  f"the executions' insert took {seconds:.1f} s")  # fmt: skip
            print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
            print("| call | range | wall p50 | wall p99 | database CPU a call | client CPU a call |")
            print("| --- | --- | --- | --- | --- | --- |")
            for label, window in (("60 days (all)", everything), ("last 30 days", last_30_days)):
                for call, t in asyncio.run(measure(url, args.runs, window)).items():
                    print(f"| {call} | {label} | {t.p50:.1f} ms | {t.p99:.1f} ms | {t.server_cpu:.1f} ms | "
                          f"{t.client_cpu:.1f} ms |")  # fmt: skip
            print(f"load average after: {os.getloadavg()[0]:.1f}")
        finally:
            if name is not None:
                drop_postgres(args.postgres_url, name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
