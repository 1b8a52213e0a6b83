"""How long one heartbeat flush holds the event loop, on Postgres (or SQLite): the heartbeats' tail under a fleet.

A fleet's buffered heartbeat reports are written by the flush every half second (controlplane_domain/workers/
flushing.py). Whatever of it runs without giving the loop back delays every request that arrived meanwhile: that
stall is the heartbeats' p99 at fleet scale, not their median. This measures it without a load generator (whose
figures this machine's noise swamps): `--reports` workers registered, then `--flushes` flushes of one report
each, while a task that does nothing but yield records the longest gap between two of its turns (the longest the
loop was held). Reported: the median flush's duration and longest stall.

    python -m benchmarks.flush_stall --reports 2500 --flushes 7
    python -m benchmarks.flush_stall --store sqlite
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from benchmarks.run import drop_postgres, postgres_database
from controlplane_adapters.clock import SystemClock, UuidGenerator
from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.engine import create_engine, create_sqlite_engine
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.ports import Ports
from controlplane_domain.workers.entity import Worker, WorkerStatus
from controlplane_domain.workers.flushing import FLUSH_BATCH, flush_heartbeats
from controlplane_domain.workers.heartbeats import HeartbeatBuffer

POSTGRES_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"


def _fleet(count: int, at: datetime) -> list[Worker]:
    organization = "flush-stall"
    return [
        Worker(
            worker_id=f"worker-{number}",
            organization_id=organization,
            environment_name="default",
            status=WorkerStatus.ACTIVE,
            tasks_processed=number,
            current_task_id=None,
            worker_metadata={"host": f"host-{number}", "slots": 4},
            heartbeat_interval_seconds=10,
            registered_at=at,
            last_heartbeat_at=at,
            queue_id=None,
        )
        for number in range(count)
    ]


async def _longest_stall(stop: asyncio.Event, gaps: list[float]) -> None:
    last = time.perf_counter()
    while not stop.is_set():
        await asyncio.sleep(0)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now


async def measure(url: str, reports: int, flushes: int, batch: int | None) -> tuple[list[float], list[float]]:
    migrating = create_engine(url)
    await migrate.upgrade(migrating)
    await migrating.dispose()
    # as the server's units of work: SQLite's in the loop's thread, Postgres's on its async engine
    engine = create_sqlite_engine(url) if url.startswith("sqlite") else create_engine(url)
    buffer = HeartbeatBuffer()
    ports = Ports(uow=lambda: SqlUnitOfWork(engine), clock=SystemClock(), ids=UuidGenerator(), heartbeats=buffer)
    start = datetime.now(UTC)
    fleet = _fleet(reports, start)
    async with ports.uow() as uow:
        await uow.workers.save_reports(fleet)
        await uow.commit()
    durations, stalls = [], []
    try:
        for turn in range(1, flushes + 1):
            for worker in fleet:
                buffer.hold(replace(worker, last_heartbeat_at=start + timedelta(seconds=turn)))
            stop, gaps = asyncio.Event(), [0.0]
            ticker = asyncio.create_task(_longest_stall(stop, gaps))
            await asyncio.sleep(0)
            began = time.perf_counter()
            written = await flush_heartbeats(ports, batch)
            durations.append(time.perf_counter() - began)
            stop.set()
            await ticker
            stalls.append(max(gaps))
            assert written == reports, written
    finally:
        if isinstance(engine, AsyncEngine):
            await engine.dispose()
        else:
            engine.dispose()
    return durations, stalls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--reports", type=int, default=2500, help="a flush's reports (5,000 workers, 2 s apart)")
    parser.add_argument("--flushes", type=int, default=7)
    parser.add_argument("--postgres-url", default=POSTGRES_URL)
    arguments = parser.parse_args()
    name = None
    if arguments.store == "postgres":
        url, name = postgres_database(arguments.postgres_url)
        batch = None  # as the server flushes on Postgres (controlplane_runtime/tasks.py)
    else:
        url = f"sqlite+aiosqlite:///{Path(tempfile.mkdtemp(prefix='flush-stall-')) / f'{uuid.uuid4().hex}.db'}"
        batch = FLUSH_BATCH
    try:
        durations, stalls = asyncio.run(measure(url, arguments.reports, arguments.flushes, batch))
    finally:
        if name is not None:
            drop_postgres(arguments.postgres_url, name)
    print(f"{arguments.store}, {arguments.reports} reports a flush, {arguments.flushes} flushes: flush median "
          f"{statistics.median(durations) * 1000:.1f} ms; longest stall median {statistics.median(stalls) * 1000:.1f}"
          f" ms, max {max(stalls) * 1000:.1f} ms ({', '.join(f'{s * 1000:.1f}' for s in stalls)})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
