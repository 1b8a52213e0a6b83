"""`make bench`: the real server on SQLite and Postgres under wrk on loopback, against a bare Litestar app.

Prints, for each scenario, requests (or round trips) per second, p50 and p99 latency, and the ratio to the
bare app measured in the same run. `--smoke` runs every scenario for about a second (CI keeps it working)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from benchmarks import wrk_scripts

KEY = "bench-service-key"
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Result:
    scenario: str
    database: str
    rate: float
    p50_ms: float
    p99_ms: float
    unit: str = "req/s"
    errors: int = 0
    note: str = ""
    baseline: float = 0.0  # the bare app's rate measured just before this scenario


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_ready(url: str, headers: dict[str, str] | None = None, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, headers=headers, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not become ready")


@contextmanager
def process(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as sink:
        proc = subprocess.Popen(args, env={**os.environ, **env}, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def wrk(url: str, seconds: float, connections: int, headers: dict[str, str], script: str | None = None,
        args: list[str] | None = None) -> tuple[float, float, float, int]:  # fmt: skip
    command = ["wrk", "-t2", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        if script:
            lua.write(script)
    if script:
        command += ["-s", lua.name]
    command.append(url)
    if args:
        command += ["--", *args]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    os.unlink(lua.name)
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    errors = int(m.group(1)) if (m := re.search(r"Non-2xx or 3xx responses: (\d+)", output)) else 0
    return rate, _latency(output, "50%"), _latency(output, "99%"), errors


def _latency(output: str, label: str) -> float:
    match = re.search(rf"{label}\s+([\d.]+)(us|ms|s)\b", output)
    if match is None:
        return float("nan")
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


class BareApp:
    """The ceiling, kept running for the whole run and measured again right before every scenario: a shared
    machine's speed drifts by 10-20% over minutes, so each ratio divides by a rate measured seconds earlier."""

    def __init__(self, connections: int, workdir: Path) -> None:
        self.connections = connections
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/constant"
        args = [sys.executable, "-m", "uvicorn", "benchmarks.bare_app:app", "--port", str(self.port), "--log-level",
                "warning", "--no-access-log", "--loop", "uvloop", "--http", "httptools"]  # fmt: skip
        self._process = process(args, {}, workdir / "bare.log")

    def __enter__(self) -> BareApp:
        self._process.__enter__()
        wait_ready(self.url)
        return self

    def __exit__(self, *exc: object) -> None:
        self._process.__exit__(None, None, None)

    def measure(self, seconds: float) -> Result:
        rate, p50, p99, errors = wrk(self.url, seconds, self.connections, {})
        return Result("bare Litestar, constant JSON", "-", rate, p50, p99, errors=errors, baseline=rate)


def server_env(database_url: str) -> dict[str, str]:
    return {
        "SERVICE_API_KEY": KEY,
        "CONTROLPLANE_DATABASE_URL": database_url,
        "CONTROLPLANE_RATE_LIMIT_PER_MINUTE": "1000000",
        "CONTROLPLANE_WORKER_RATE_LIMIT_PER_MINUTE": "1000000",
        "CONTROLPLANE_LOG_LEVEL": "warning",
    }


def seed(base: str) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        agents = [client.post("/api/v1/agents", json={"name": f"seed-{i}"}).json()["id"] for i in range(40)]
        teams = [client.post("/api/v1/teams", json={"name": f"team-{i}"}).json()["id"] for i in range(2)]
        environment = client.post("/api/v1/environments", json={"name": "bench"}).json()["id"]
        queue = client.post(f"/api/v1/environments/{environment}/worker-queues", json={"name": "q"}).json()["id"]
    return {"agent": agents[0], "team_a": teams[0], "team_b": teams[1], "queue": queue, "mover": agents[1]}


async def round_trips(base: str, seconds: float, concurrency: int, seeded: dict[str, str], raw: bool = False) -> Any:
    """execute -> lease -> events -> complete, as fast as `concurrency` clients can; schedule-to-start is the
    time from the execute's answer to the lease's answer."""
    headers = {"Authorization": f"Bearer {KEY}"}
    limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency * 2)
    done = 0
    starts: list[float] = []
    latencies: list[float] = []
    errors = 0
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=30) as client:

        async def loop(index: int) -> None:
            nonlocal done, errors
            worker = f"bench-{index}"
            while time.monotonic() < deadline:
                began = time.perf_counter()
                created = await client.post(
                    f"/api/v1/agents/{seeded['agent']}/execute",
                    json={"prompt": "p", "worker_queue_id": seeded["queue"]},
                )
                queued_at = time.perf_counter()
                leased = await client.post(
                    f"/api/v1/worker-queues/{seeded['queue']}/lease", json={"worker_id": worker, "wait_seconds": 5}
                )
                if created.status_code != 201 or leased.status_code != 200:
                    errors += 1
                    continue
                starts.append((time.perf_counter() - queued_at) * 1000)
                lease = leased.json()
                execution_id, attempt = lease["execution"]["id"], lease["attempt"]
                events = [{"type": "message_chunk", "data": {"text": "x"}}] * 3
                await client.post(f"/api/v1/executions/{execution_id}/events",
                                  json={"worker_id": worker, "attempt": attempt, "events": events})  # fmt: skip
                finished = await client.post(f"/api/v1/executions/{execution_id}/complete",
                                             json={"worker_id": worker, "attempt": attempt, "status": "completed",
                                                   "response": "ok"})  # fmt: skip
                if finished.status_code != 200:
                    errors += 1
                    continue
                done += 1
                latencies.append((time.perf_counter() - began) * 1000)

        began = time.monotonic()
        await asyncio.gather(*(loop(i) for i in range(concurrency)))
        elapsed = time.monotonic() - began
    if raw:
        return done, latencies, starts, errors
    starts.sort()
    p99_start = starts[int(len(starts) * 0.99) - 1] if starts else float("nan")
    return Result(
        "execution round trip", "", done / elapsed, _pct(latencies, 50), _pct(latencies, 99), "round trips/s",
        errors, f"schedule-to-start p50 {_pct(starts, 50):.1f} ms, p99 {p99_start:.1f} ms",
    )  # fmt: skip


def _drive(base: str, seconds: float, concurrency: int, seeded: dict[str, str]) -> Any:
    """One client process's share of the round trips: (done, latencies, schedule-to-start, errors)."""
    return asyncio.run(round_trips(base, seconds, concurrency, seeded, raw=True))


def round_trips_in_processes(
    base: str, seconds: float, processes: int, concurrency: int, seeded: dict[str, str]
) -> Result:
    """One Python client process saturates before the server does: drive from several and add up."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        parts = pool.starmap(_drive, [(base, seconds, concurrency, seeded)] * processes)
    done = sum(part[0] for part in parts)
    latencies = [value for part in parts for value in part[1]]
    starts = [value for part in parts for value in part[2]]
    errors = sum(part[3] for part in parts)
    note = (f"{processes} client processes x {concurrency}; schedule-to-start p50 {_pct(starts, 50):.1f} ms, "
            f"p99 {_pct(starts, 99):.1f} ms")  # fmt: skip
    return Result("execution round trip", "", done / seconds, _pct(latencies, 50), _pct(latencies, 99),
                  "round trips/s", errors, note)  # fmt: skip


def _pct(values: list[float], percent: int) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(len(ordered) * percent / 100) - 1))]


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def sse_streams(base: str, pid: int, streams: int, events: int, seeded: dict[str, str]) -> Result:
    """`streams` clients follow one running execution; a worker appends `events` events stamped with the send
    time; delivery latency is receive time minus send time on the same clock."""
    headers = {"Authorization": f"Bearer {KEY}"}
    limits = httpx.Limits(max_connections=streams + 10, max_keepalive_connections=streams + 10)
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=120) as client:
        created = await client.post(f"/api/v1/agents/{seeded['agent']}/execute",
                                    json={"prompt": "sse", "worker_queue_id": seeded["queue"]})  # fmt: skip
        execution_id = created.json()["id"]
        leased = (await client.post(f"/api/v1/worker-queues/{seeded['queue']}/lease",
                                    json={"worker_id": "sse-worker", "wait_seconds": 5})).json()  # fmt: skip
        # drain any queued leftovers so the lease above is the stream's execution
        while leased["execution"]["id"] != execution_id:
            leased = (await client.post(f"/api/v1/worker-queues/{seeded['queue']}/lease",
                                        json={"worker_id": "sse-worker", "wait_seconds": 5})).json()  # fmt: skip
        attempt = leased["attempt"]
        before = rss_kb(pid)
        latencies: list[float] = []
        connected = 0
        all_connected = asyncio.Event()

        async def follow() -> None:
            nonlocal connected
            async with client.stream("GET", f"/api/v1/executions/{execution_id}/stream") as response:
                connected += 1
                if connected == streams:
                    all_connected.set()
                async for line in response.aiter_lines():
                    if line.startswith("data: ") and '"sent"' in line:
                        sent = json.loads(line[6:])["data"]["sent"]
                        latencies.append((time.time() - sent) * 1000)
                    elif line.startswith("event: done"):
                        return

        readers = [asyncio.create_task(follow()) for _ in range(streams)]
        await asyncio.wait_for(all_connected.wait(), timeout=60)
        await asyncio.sleep(0.5)  # let every stream reach its first wait
        during = rss_kb(pid)
        for _ in range(events):
            await client.post(f"/api/v1/executions/{execution_id}/events",
                              json={"worker_id": "sse-worker", "attempt": attempt,
                                    "events": [{"type": "log", "data": {"sent": time.time()}}]})  # fmt: skip
            await asyncio.sleep(0.02)
        await client.post(f"/api/v1/executions/{execution_id}/complete",
                          json={"worker_id": "sse-worker", "attempt": attempt, "status": "completed"})  # fmt: skip
        await asyncio.wait_for(asyncio.gather(*readers), timeout=120)
    per_stream = (during - before) / streams
    note = f"{streams} streams, {len(latencies)} deliveries, server RSS +{(during - before) / 1024:.1f} MB " \
           f"({per_stream:.1f} KB a stream)"  # fmt: skip
    return Result(f"{streams} concurrent SSE streams", "", len(latencies), _pct(latencies, 50), _pct(latencies, 99),
                  "deliveries", 0, note)  # fmt: skip


def control_plane(database: str, database_url: str, seconds: float, connections: int, smoke: bool,
                  workdir: Path, bare: BareApp) -> list[Result]:  # fmt: skip
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {KEY}"}
    args = [sys.executable, "-m", "controlplane_http.cli", "serve", "--port", str(port)]
    results = []
    with process(args, server_env(database_url), workdir / f"server-{database}.log") as proc:
        wait_ready(f"{base}/api/health", headers)
        seeded = seed(base)
        simple = [
            ("get agent by id", f"{base}/api/v1/agents/{seeded['agent']}", None, None),
            ("list agents (20 a page)", f"{base}/api/v1/agents?limit=20", None, None),
            ("create agent", f"{base}/api/v1/agents", wrk_scripts.CREATE_AGENT, [uuid.uuid4().hex[:8]]),
            ("worker heartbeat", f"{base}/api/v1/workers/heartbeat", wrk_scripts.HEARTBEAT, None),
            ("add agent to team", base,
             wrk_scripts.ADD_TO_TEAM, [f"/api/v1/teams/{seeded['team_a']}/agents/{seeded['mover']}",
                                       f"/api/v1/teams/{seeded['team_b']}/agents/{seeded['mover']}"]),
        ]  # fmt: skip
        for name, url, script, script_args in simple:
            baseline = bare.measure(seconds).rate
            rate, p50, p99, errors = wrk(url, seconds, connections, headers, script, script_args)
            results.append(Result(name, database, rate, p50, p99, errors=errors, baseline=baseline))
        trip = round_trips_in_processes(base, seconds, 1 if smoke else 3, 8 if smoke else 12, seeded)
        trip.database = database
        results.append(trip)
        sse = asyncio.run(sse_streams(base, proc.pid, 20 if smoke else 1000, 5 if smoke else 20, seeded))
        sse.database = database
        results.append(sse)
    return results


def _admin(admin_url: str, statement: str) -> None:
    import asyncpg
    import sqlalchemy as sa

    url = sa.make_url(admin_url)

    async def run() -> None:
        connection = await asyncpg.connect(host=url.host, port=url.port or 5432, user=url.username,
                                           password=url.password, database=url.database)  # fmt: skip
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(run())


def postgres_database(admin_url: str) -> tuple[str, str]:
    import sqlalchemy as sa

    name = f"controlplane_bench_{uuid.uuid4().hex[:8]}"
    _admin(admin_url, f'CREATE DATABASE "{name}"')
    return sa.make_url(admin_url).set(database=name).render_as_string(hide_password=False), name


def drop_postgres(admin_url: str, name: str) -> None:
    _admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())  # fmt: skip
    memory = next((line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal")), "?")  # fmt: skip
    return (f"{os.cpu_count()} cores ({cpu}), {int(memory) // 1024 // 1024} GiB, Python "
            f"{platform.python_version()}, {platform.system()} {platform.release()}")  # fmt: skip


def table(results: list[Result], bare: Result) -> str:
    lines = ["| scenario | store | rate | p50 | p99 | bare just before | vs bare | errors | notes |",
             "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in [bare, *results]:
        ratio = f"{r.rate / r.baseline:.2f}" if r.unit == "req/s" and r.baseline else "-"
        before = f"{r.baseline:,.0f} req/s" if r.baseline else "-"
        cells = [r.scenario, r.database, f"{r.rate:,.0f} {r.unit}", f"{r.p50_ms:.2f} ms", f"{r.p99_ms:.2f} ms", before,
                 ratio, str(r.errors), r.note]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--smoke", action="store_true", help="about a second a scenario, few streams")
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--postgres-url", default=os.environ.get(
        "CONTROLPLANE_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"))  # fmt: skip
    arguments = parser.parse_args()
    seconds = 1 if arguments.smoke else arguments.seconds
    workdir = Path(tempfile.mkdtemp(prefix="controlplane-bench-"))
    print(f"machine: {machine()}")
    results: list[Result] = []
    with BareApp(arguments.connections, workdir) as bare_app:
        bare = bare_app.measure(seconds)
        for store in arguments.stores.split(","):
            if store == "sqlite":
                url = f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
                results += control_plane("sqlite", url, seconds, arguments.connections, arguments.smoke, workdir,
                                         bare_app)  # fmt: skip
            elif store == "postgres":
                url, name = postgres_database(arguments.postgres_url)
                try:
                    results += control_plane("postgres", url, seconds, arguments.connections, arguments.smoke,
                                             workdir, bare_app)  # fmt: skip
                finally:
                    drop_postgres(arguments.postgres_url, name)
    print(table(results, bare))
    print(f"logs: {workdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
