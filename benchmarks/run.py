"""`make bench`: the real server on SQLite and Postgres under wrk on loopback, against a bare Litestar app.

With no `--only`, the fleet's load (random ids, 5,000 workers, random pages) and the round trip, each the
median of three runs. Prints, for each scenario, requests (or round trips) per second, p50 and p99 latency, and
the ratio to the bare app measured in the same run; the orchestration scenarios (cron jobs due at once,
workflow step hand-overs) are described in benchmarks/orchestration.py. `--smoke` runs every scenario for
about a second (CI keeps it working)."""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

from benchmarks import wrk_scripts
from controlplane_http.cli import CORKED_HTTP  # the bare app is served as `controlplane serve` serves

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
def process(
    args: list[str], env: dict[str, str], log: Path, stop_seconds: float = 15
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as sink:
        proc = subprocess.Popen(args, env={**os.environ, **env}, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=stop_seconds)
        except subprocess.TimeoutExpired:
            proc.kill()


def run_wrk(url: str, seconds: float, threads: int, connections: int, headers: dict[str, str],
            script: str | None = None, args: list[str] | None = None) -> str:  # fmt: skip
    """wrk's output for one run (`--latency`), with an optional Lua script and its arguments."""
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency"]
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
    try:
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(lua.name)


def wrk(url: str, seconds: float, connections: int, headers: dict[str, str], script: str | None = None,
        args: list[str] | None = None) -> tuple[float, float, float, int]:  # fmt: skip
    output = run_wrk(url, seconds, 2, connections, headers, script, args)
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
                "warning", "--no-access-log", "--loop", "uvloop", "--http", CORKED_HTTP]  # fmt: skip
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
        "CONTROLPLANE_SERVICE_RATE_LIMIT_PER_MINUTE": "1000000",  # (the load calls with the service key)
        "CONTROLPLANE_LOG_LEVEL": "warning",
    }


FLEET_WORKERS = 5000  # distinct workers heartbeating (the fleet scenario)
FLEET_AGENTS = 1000  # agents in the store: gets pick among the first FLEET_GETS, pages among all
FLEET_GETS = 50


def register_fleet(base: str, workers: int, concurrency: int = 32) -> None:
    """One heartbeat from each of the fleet's workers (`wrk_scripts.FLEET_HEARTBEAT`'s names), so that the runs
    measure a fleet's heartbeats, not its registrations (each a write of its own: the first run on a fresh store
    read at half the rate of the next ones)."""

    async def register() -> None:
        names = iter(range(1, workers + 1))
        headers = {"Authorization": f"Bearer {KEY}"}
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:

            async def one_by_one() -> None:
                for number in names:
                    body = {"worker_id": f"fleet-worker-{number}", "environment_name": "bench"}
                    (await client.post("/api/v1/workers/heartbeat", json=body)).raise_for_status()

            await asyncio.gather(*(one_by_one() for _ in range(concurrency)))

    asyncio.run(register())


def seed(base: str, agents_wanted: int = 40) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        agents = [client.post("/api/v1/agents", json={"name": f"seed-{i}"}).json()["id"]
                  for i in range(max(2, agents_wanted))]  # fmt: skip
        teams = [client.post("/api/v1/teams", json={"name": f"team-{i}"}).json()["id"] for i in range(2)]
        environment = client.post("/api/v1/environments", json={"name": "bench"}).json()["id"]
        queue = client.post(f"/api/v1/environments/{environment}/worker-queues", json={"name": "q"}).json()["id"]
    return {"agent": agents[0], "team_a": teams[0], "team_b": teams[1], "queue": queue, "mover": agents[1],
            "environment": environment, "agents": agents}  # fmt: skip


ROUND_TRIP_WORKERS = 16


def round_trips(base: str, database_url: str, seconds: float, workers: int, seeded: dict[str, Any]) -> Result:
    """execute -> lease -> events -> complete, driven by wrk (one connection a thread, each a worker running the
    cycle: see wrk_scripts.ROUND_TRIP). A Python client spent more CPU a round trip than the server did and was
    the bottleneck. Schedule-to-start is the server's own queued_at -> started_at of this run's executions."""
    headers = {"Authorization": f"Bearer {KEY}"}
    # A queue of its own: the workers wrk stops between an execute and its lease leave executions queued, and a
    # run on the same queue would lease those first (oldest first), every execution waiting behind them.
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        created = client.post(f"/api/v1/environments/{seeded['environment']}/worker-queues",
                              json={"name": f"round-trip-{uuid.uuid4().hex[:8]}"})  # fmt: skip
        queue = created.raise_for_status().json()["id"]
    since = datetime.now(UTC)
    output = run_wrk(base, seconds, workers, workers, headers, wrk_scripts.ROUND_TRIP, [seeded["agent"], queue])
    match = re.search(r"ROUND_TRIPS (\d+) FAILURES (\d+)", output)
    if match is None:
        raise RuntimeError(f"wrk printed no round trip count:\n{output}")
    done, failures = int(match.group(1)), int(match.group(2))
    starts = asyncio.run(schedule_to_start(database_url, since))
    note = (f"p50/p99: schedule-to-start (queued -> leased, {len(starts)} executions); {workers} wrk workers, "
            f"a request p50 {_latency(output, '50%'):.2f} ms, p99 {_latency(output, '99%'):.2f} ms")  # fmt: skip
    rate = done / max(1, round(seconds))
    return Result("execution round trip", "", rate, _pct(starts, 50), _pct(starts, 99), "round trips/s", failures,
                  note)  # fmt: skip


async def schedule_to_start(database_url: str, since: datetime) -> list[float]:
    """queued_at -> started_at (ms) of every round-trip execution queued since `since`, as the server recorded
    them."""
    from controlplane_adapters.executions.table import executions
    from controlplane_adapters.sql.engine import create_engine

    engine = create_engine(database_url)
    try:
        t = executions
        async with engine.connect() as connection:
            rows = await connection.execute(
                sa.select(t.c.queued_at, t.c.started_at).where(
                    t.c.prompt == "round trip", t.c.started_at.is_not(None), t.c.queued_at >= since
                )
            )
            return [(started - queued).total_seconds() * 1000 for queued, started in rows]
    finally:
        await engine.dispose()


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


SSE_PROCESSES = 4


@dataclass
class StreamLoad:
    """The `sse` scenario's load (`--streams`, `--stream-events`, `--stream-interval-ms`): by default 1000 streams,
    40 events 50 ms apart (20 events a second: 20,000 deliveries a second)."""

    streams: int = 1000
    events: int = 40
    interval: float = 0.05  # seconds between events


STREAM_LOAD = StreamLoad()


async def _follow_streams(port: int, execution_id: str, count: int, connected: Any, warm: Any) -> list[float]:
    """`count` streams on raw sockets (an HTTP client library costs more per line than the server does per
    frame); returns the delivery latencies of the timed events, in ms."""
    latencies: list[float] = []
    received = 0
    warmed = 0

    async def one() -> None:
        nonlocal received, warmed
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET /api/v1/executions/{execution_id}/stream HTTP/1.1\r\nHost: bench\r\n"
                     f"Authorization: Bearer {KEY}\r\n\r\n".encode())  # fmt: skip
        first = True
        while line := await reader.readline():
            if first:
                first = False
                received += 1
                if received == count:
                    connected.set()
            if line.startswith(b"data: ") and b'"sent":' in line:
                now = time.time()
                start = line.index(b'"sent":') + 7
                latencies.append((now - float(line[start : line.index(b"}", start)])) * 1000)
            elif line.startswith(b"data: ") and b'"warm"' in line:
                warmed += 1
                if warmed == count:
                    warm.set()
            elif line.startswith(b"event: done"):
                break
        writer.close()

    await asyncio.gather(*(one() for _ in range(count)))
    return latencies


def _stream_process(port: int, execution_id: str, count: int, connected: Any, warm: Any, out: Any) -> None:
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    out.put(asyncio.run(_follow_streams(port, execution_id, count, connected, warm)))


def sse_streams(base: str, pid: int, streams: int, events: int, seeded: dict[str, Any]) -> Result:
    """`streams` clients (in SSE_PROCESSES processes) follow one running execution; a worker appends `events`
    events STREAM_LOAD.interval apart, each stamped with its send time; delivery latency is receive time minus send
    time on the same clock. A warm-up event that every stream has received starts the clock."""
    import multiprocessing

    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
        created = client.post(f"/api/v1/agents/{seeded['agent']}/execute",
                              json={"prompt": "sse", "worker_queue_id": seeded["queue"]})  # fmt: skip
        execution_id = created.json()["id"]
        lease_body = {"worker_id": "sse-worker", "wait_seconds": 5}
        leased = client.post(f"/api/v1/worker-queues/{seeded['queue']}/lease", json=lease_body).json()
        while leased["execution"]["id"] != execution_id:  # drain leftovers: the stream's execution is ours
            leased = client.post(f"/api/v1/worker-queues/{seeded['queue']}/lease", json=lease_body).json()
        attempt = leased["attempt"]

        def append(data: dict[str, Any]) -> None:
            client.post(f"/api/v1/executions/{execution_id}/events",
                        json={"worker_id": "sse-worker", "attempt": attempt,
                              "events": [{"type": "log", "data": data}]})  # fmt: skip

        context = multiprocessing.get_context("spawn")
        out = context.Queue()
        processes = min(SSE_PROCESSES, streams)
        shares = [streams // processes + (1 if i < streams % processes else 0) for i in range(processes)]
        flags = [(context.Event(), context.Event()) for _ in shares]
        port = int(base.rsplit(":", 1)[1])
        children = [context.Process(target=_stream_process, args=(port, execution_id, share, connected, warm, out))
                    for share, (connected, warm) in zip(shares, flags, strict=True)]  # fmt: skip
        before = rss_kb(pid)
        for child in children:
            child.start()
        for connected, _ in flags:
            if not connected.wait(120):
                raise RuntimeError("the SSE streams did not all connect")
        append({"warm": True})
        for _, warm in flags:
            if not warm.wait(120):
                raise RuntimeError("the warm-up event did not reach every stream")
        during = rss_kb(pid)
        for _ in range(events):
            append({"sent": time.time()})
            time.sleep(STREAM_LOAD.interval)
        client.post(f"/api/v1/executions/{execution_id}/complete",
                    json={"worker_id": "sse-worker", "attempt": attempt, "status": "completed"})  # fmt: skip
        latencies = [value for _ in children for value in out.get(timeout=120)]
        for child in children:
            child.join(30)
    per_stream = (during - before) / streams
    note = (f"{streams} streams in {processes} client processes, an event every {STREAM_LOAD.interval * 1000:.0f} ms, "
            f"{len(latencies)} deliveries, server RSS +{(during - before) / 1024:.1f} MB "
            f"({per_stream:.1f} KB a stream)")  # fmt: skip
    return Result(f"{streams} concurrent SSE streams", "", len(latencies), _pct(latencies, 50), _pct(latencies, 99),
                  "deliveries", streams * events - len(latencies), note)  # fmt: skip


SCENARIOS = ("fleet-get", "fleet-heartbeat", "fleet-pages", "get", "list", "pages", "create", "heartbeat", "team",
             "roundtrip", "sse", "orchestration")  # fmt: skip
# `make bench` with no --only: the fleet's load (random ids among 50 agents, heartbeats from 5,000 workers, random
# pages of 20 over 1,000 agents) and the execution round trip, each the median of three runs against the bare app
FLEET = ("fleet-get", "fleet-heartbeat", "fleet-pages", "roundtrip")
CRON_JOBS = 1000
SCHEDULER_INTERVAL_MS = 1000  # the server's default (server_env sets none)
ALL = frozenset(SCENARIOS)
READ_FROM_DATABASE = frozenset({"roundtrip", "orchestration"})  # they read the server's tables: not on `memory://`


def control_plane(database: str, database_url: str, seconds: float, connections: int, smoke: bool, workdir: Path,
                  bare: BareApp, only: frozenset[str] = ALL, repeat: int = 1) -> list[Result]:  # fmt: skip
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {KEY}"}
    args = [sys.executable, "-m", "controlplane_http.cli", "serve", "--port", str(port)]
    results = []
    with process(args, server_env(database_url), workdir / f"server-{database}.log") as proc:
        wait_ready(f"{base}/api/health", headers)
        fleet = bool(only & {"fleet-get", "fleet-pages"})
        seeded = seed(base, (100 if smoke else FLEET_AGENTS) if fleet else 40)
        agents: list[str] = seeded["agents"]
        gets = agents[:FLEET_GETS]
        team_paths = [f"/api/v1/teams/{seeded['team_a']}/agents/{seeded['mover']}",
                      f"/api/v1/teams/{seeded['team_b']}/agents/{seeded['mover']}"]  # fmt: skip
        simple: list[tuple[str, str, str, str | None, Callable[[], list[str] | None]]] = [
            ("fleet-get", f"get agent, {len(gets)} at random", f"{base}/api/v1/agents", wrk_scripts.RANDOM_GET,
             lambda: gets),
            ("fleet-heartbeat", f"heartbeat, {FLEET_WORKERS:,} workers at random", f"{base}/api/v1/workers/heartbeat",
             wrk_scripts.FLEET_HEARTBEAT, lambda: [str(FLEET_WORKERS)]),
            ("fleet-pages", f"list agents, random pages of 20 over {len(agents):,}", f"{base}/api/v1/agents",
             wrk_scripts.RANDOM_PAGES, lambda: [str(len(agents))]),
            ("get", "get agent by id", f"{base}/api/v1/agents/{seeded['agent']}", None, lambda: None),
            ("list", "list agents (20 a page)", f"{base}/api/v1/agents?limit=20", None, lambda: None),
            ("pages", "list agents, 20 pages in turn", f"{base}/api/v1/agents", wrk_scripts.LIST_PAGES, lambda: None),
            # a fresh name prefix for every run: a repeated run must create, not collide
            ("create", "create agent", f"{base}/api/v1/agents", wrk_scripts.CREATE_AGENT,
             lambda: [uuid.uuid4().hex[:8]]),
            ("heartbeat", "worker heartbeat", f"{base}/api/v1/workers/heartbeat", wrk_scripts.HEARTBEAT, lambda: None),
            ("team", "add agent to team", base, wrk_scripts.ADD_TO_TEAM, lambda: team_paths),
        ]  # fmt: skip
        for key, name, url, script, script_args in simple:
            if key not in only:
                continue
            if key == "fleet-heartbeat":  # a fleet of known workers: their registrations are not what is measured
                register_fleet(base, 50 if smoke else FLEET_WORKERS)
            runs = []
            for _ in range(repeat):  # each run against the bare app measured just before it; the median kept
                baseline = bare.measure(seconds).rate
                rate, p50, p99, errors = wrk(url, seconds, connections, headers, script, script_args())
                runs.append(Result(name, database, rate, p50, p99, errors=errors, baseline=baseline))
            runs.sort(key=lambda run: run.rate / run.baseline)
            chosen = runs[len(runs) // 2]
            if repeat > 1:
                chosen.note = "median of " + ", ".join(f"{run.rate / run.baseline:.2f}" for run in runs)
            results.append(chosen)
        if "roundtrip" in only:
            # a warm-up first, not counted: the first seconds on fresh tables (Postgres plans them before their
            # statistics exist; every connection of the pool opens) ran at two thirds of the rate of the next runs
            round_trips(base, database_url, 1 if smoke else seconds / 2, 4 if smoke else ROUND_TRIP_WORKERS, seeded)
            trips = []
            for _ in range(repeat):  # the bare app measured just before each run tells how fast the machine was
                baseline = bare.measure(seconds).rate
                trip = round_trips(base, database_url, seconds, 4 if smoke else ROUND_TRIP_WORKERS, seeded)
                trip.database, trip.baseline = database, baseline
                trips.append(trip)
            trips.sort(key=lambda run: run.rate)
            chosen = trips[len(trips) // 2]
            if repeat > 1:
                chosen.note += "; median of " + ", ".join(f"{run.rate:.0f} (bare {run.baseline:,.0f})" for run in trips)
            # The rate follows the machine's speed of the minute (so does the bare app's): per 1,000 req/s of the
            # bare app measured just before, the figure that compares runs made minutes or machines apart.
            relative = sorted(1000 * run.rate / run.baseline for run in trips if run.baseline)
            if relative:
                chosen.note += f"; {relative[len(relative) // 2]:.1f} round trips a second per 1,000 bare req/s"
            results.append(chosen)
        if "sse" in only:
            load = STREAM_LOAD
            sse = sse_streams(base, proc.pid, 20 if smoke else load.streams, 5 if smoke else load.events, seeded)
            sse.database = database
            results.append(sse)
        if "orchestration" in only:  # cron jobs due at once, workflow step hand-overs: benchmarks/orchestration.py
            from benchmarks import orchestration

            cron = orchestration.cron_due(base, database_url, 20 if smoke else CRON_JOBS, seeded, SCHEDULER_INTERVAL_MS)
            chain = orchestration.hand_over(base, database_url, 2 if smoke else 8, 4 if smoke else 26, seeded)
            for result in (cron, chain):
                result.database = database
                results.append(result)
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
    parser.add_argument(
        "--stores",
        default="sqlite,postgres",
        help="sqlite, postgres, memory (the server on `memory://`: the HTTP stack's ceiling)",
    )
    names = ",".join(SCENARIOS)
    parser.add_argument("--only", default=None,
                        help=f"a comma-separated subset of {names}, or `all` (default: {','.join(FLEET)}; with"
                             " --smoke, all)")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=3, help="runs of each request scenario; the median ratio is kept")
    parser.add_argument("--postgres-url", default=os.environ.get(
        "CONTROLPLANE_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"))  # fmt: skip
    parser.add_argument("--streams", type=int, default=StreamLoad.streams, help="the sse scenario's streams")
    parser.add_argument("--stream-events", type=int, default=StreamLoad.events, help="the sse scenario's events")
    parser.add_argument("--stream-interval-ms", type=float, default=StreamLoad.interval * 1000,
                        help="the sse scenario's time between events")  # fmt: skip
    arguments = parser.parse_args()
    STREAM_LOAD.streams, STREAM_LOAD.events = arguments.streams, arguments.stream_events
    STREAM_LOAD.interval = arguments.stream_interval_ms / 1000
    seconds = 1 if arguments.smoke else arguments.seconds
    chosen = arguments.only or ("all" if arguments.smoke else ",".join(FLEET))
    only = ALL if chosen == "all" else frozenset(chosen.split(","))
    repeat = 1 if arguments.smoke else arguments.repeat
    if unknown := only - set(SCENARIOS):
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    workdir = Path(tempfile.mkdtemp(prefix="controlplane-bench-"))
    print(f"machine: {machine()}")
    results: list[Result] = []
    with BareApp(arguments.connections, workdir) as bare_app:
        bare = bare_app.measure(seconds)
        for store in arguments.stores.split(","):
            if store == "sqlite":
                url = f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
                results += control_plane("sqlite", url, seconds, arguments.connections, arguments.smoke, workdir,
                                         bare_app, only, repeat)  # fmt: skip
            elif store == "memory":  # the whole HTTP stack over dicts: its ceiling, whatever the database
                results += control_plane("memory", "memory://", seconds, arguments.connections, arguments.smoke,
                                         workdir, bare_app, only - READ_FROM_DATABASE, repeat)  # fmt: skip
            elif store == "postgres":
                url, name = postgres_database(arguments.postgres_url)
                try:
                    results += control_plane("postgres", url, seconds, arguments.connections, arguments.smoke,
                                             workdir, bare_app, only, repeat)  # fmt: skip
                finally:
                    drop_postgres(arguments.postgres_url, name)
    print(table(results, bare))
    print(f"logs: {workdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
