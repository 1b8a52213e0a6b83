"""A fleet's heartbeats against N nodes on one Postgres (issue #34): which N holds 100,000 workers at a 10 s
heartbeat (10,000 heartbeats a second) on this machine, and where it stops.

The workers are registered first (one heartbeat through the API, then the rest as rows copied from it in one
statement), so that what is measured is the steady state: heartbeats of known workers, written behind. Then, for
each N, N `controlplane serve` processes on the same database, and as many wrk processes, each spreading its
connections' heartbeats over the whole fleet at random; the rates add up, the worst p99 is kept. wrk is a closed
loop: the figure is the rate the nodes sustain (their capacity), which holds the fleet when it is at least the
fleet's heartbeats a second.

    .venv/bin/python -m benchmarks.fleet_nodes --nodes 1,2,3 --workers 100000 --seconds 15
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import httpx

from benchmarks import wrk_scripts
from benchmarks.run import (
    KEY,
    drop_postgres,
    free_port,
    machine,
    postgres_database,
    process,
    server_env,
    wait_ready,
    wrk,
)

HEADERS = {"Authorization": f"Bearer {KEY}"}


async def _register(database_url: str, workers: int) -> None:
    """Every `fleet-worker-<n>` but the first as a copy of the first's row (registered through the API)."""
    import asyncpg
    import sqlalchemy as sa

    url = sa.make_url(database_url)
    connection = await asyncpg.connect(host=url.host, port=url.port or 5432, user=url.username,
                                       password=url.password, database=url.database)  # fmt: skip
    try:
        await connection.execute(
            """INSERT INTO workers (organization_id, worker_id, environment_name, status, tasks_processed,
                 current_task_id, worker_metadata, heartbeat_interval_seconds, registered_at, last_heartbeat_at,
                 queue_id)
               SELECT w.organization_id, 'fleet-worker-' || n, w.environment_name, w.status, w.tasks_processed,
                 w.current_task_id, w.worker_metadata, w.heartbeat_interval_seconds, w.registered_at,
                 w.last_heartbeat_at, w.queue_id
               FROM workers AS w, generate_series(2, $1) AS n WHERE w.worker_id = 'fleet-worker-1'
               ON CONFLICT DO NOTHING""",
            workers,
        )
        await connection.execute("ANALYZE workers")
    finally:
        await connection.close()


def measure(database_url: str, nodes: int, workers: int, seconds: float, connections: int, workdir: Path) -> str:
    ports = [free_port() for _ in range(nodes)]
    with ExitStack() as stack:
        for index, port in enumerate(ports):
            args = [sys.executable, "-m", "controlplane_http.cli", "serve", "--port", str(port)]
            stack.enter_context(process(args, server_env(database_url), workdir / f"node-{nodes}-{index}.log"))
        for port in ports:
            wait_ready(f"http://127.0.0.1:{port}/api/health", HEADERS, timeout=60)
        each = max(1, connections // nodes)

        def load(port: int) -> tuple[float, float, float, int]:
            url = f"http://127.0.0.1:{port}/api/v1/workers/heartbeat"
            return wrk(url, seconds, each, HEADERS, wrk_scripts.FLEET_HEARTBEAT, [str(workers)])

        with ThreadPoolExecutor(nodes) as pool:
            pool.map(load, ports)  # a warm-up: every node's connections open, its statements prepared
            runs = list(pool.map(load, ports))
    rate = sum(run[0] for run in runs)
    p50 = max(run[1] for run in runs)
    p99 = max(run[2] for run in runs)
    errors = sum(run[3] for run in runs)
    holds = "holds" if rate >= workers / 10 else "does not hold"
    return (f"| {nodes} | {rate:,.0f} heartbeats/s | {p50:.2f} ms | {p99:.2f} ms | {errors} | {holds} "
            f"{workers:,} workers at 10 s ({workers / 10:,.0f}/s) |")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", default="1,2,3", help="the node counts to measure, comma-separated")
    parser.add_argument("--workers", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--connections", type=int, default=64, help="wrk connections in all, split among nodes")
    parser.add_argument("--postgres-url", default=os.environ.get(
        "CONTROLPLANE_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"))  # fmt: skip
    arguments = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="controlplane-fleet-"))
    database_url, name = postgres_database(arguments.postgres_url)
    print(f"machine: {machine()}")
    try:
        port = free_port()
        args = [sys.executable, "-m", "controlplane_http.cli", "serve", "--port", str(port)]
        with process(args, server_env(database_url), workdir / "register.log"):  # the schema, the first worker
            wait_ready(f"http://127.0.0.1:{port}/api/health", HEADERS, timeout=60)
            body = {"worker_id": "fleet-worker-1", "environment_name": "bench", "tasks_processed": 0}
            httpx.post(
                f"http://127.0.0.1:{port}/api/v1/workers/heartbeat", json=body, headers=HEADERS
            ).raise_for_status()
        asyncio.run(_register(database_url, arguments.workers))
        print("| nodes | rate | p50 (worst node) | p99 (worst node) | errors | the fleet |")
        print("| --- | --- | --- | --- | --- | --- |")
        for nodes in (int(n) for n in arguments.nodes.split(",")):
            print(measure(database_url, nodes, arguments.workers, arguments.seconds, arguments.connections, workdir),
                  flush=True)  # fmt: skip
    finally:
        drop_postgres(arguments.postgres_url, name)
    print(f"logs: {workdir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
