"""Two (or more) builds of the server against each other on the hot routes, alternated in one run.

Each variant is a source tree (a folder holding the `controlplane_*` packages, e.g. `git archive COMMIT src`
unpacked somewhere) and optional `serve` arguments. Every round starts each variant's server in turn (the order
flips every round), on a fresh database, seeds it as `make bench` does and drives the scenarios with wrk; the
bare app is measured before each variant's scenarios. It prints every run and the median of each variant:

    git archive b2aed9b src | tar -x -C /tmp/before
    .venv/bin/python -m benchmarks.ab before=/tmp/before/src after=src --rounds 3 --seconds 5
    .venv/bin/python -m benchmarks.ab corked=src "uncorked=src --uncorked" --stores sqlite --only get,list

`--inprocess` runs `benchmarks.inprocess --cpu` for each variant instead (microseconds of this process's CPU a
request, no network, the database's own work not counted), alternated the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from benchmarks import wrk_scripts
from benchmarks.run import (
    KEY,
    ROUND_TRIP_WORKERS,
    BareApp,
    drop_postgres,
    free_port,
    machine,
    postgres_database,
    process,
    round_trips,
    seed,
    server_env,
    wait_ready,
    wrk,
)

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ("get", "list", "heartbeat", "create", "team", "roundtrip", "executions")  # executions: --inprocess
INPROCESS_ONLY = ("team_get", "team_list")  # --inprocess: a team's get and a page of 20 teams


@dataclass(frozen=True)
class Variant:
    name: str
    source: Path
    serve_args: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Variant:
        name, _, rest = text.partition("=")
        source, *args = rest.split()
        return cls(name, Path(source).resolve(), tuple(args))

    def env(self) -> dict[str, str]:
        return {"PYTHONPATH": os.pathsep.join([str(self.source), str(ROOT)])}


def one_server(variant: Variant, store: str, seconds: float, connections: int, only: list[str], workdir: Path,
               postgres_url: str) -> dict[str, float]:  # fmt: skip
    """Rates of one variant's server, started on a fresh database."""
    if store == "sqlite":
        url, name = f"sqlite+aiosqlite:///{workdir / f'ab-{uuid.uuid4().hex[:8]}.db'}", None
    else:
        url, name = postgres_database(postgres_url)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {KEY}"}
    args = [sys.executable, "-m", "controlplane_http.cli", "serve", "--port", str(port), *variant.serve_args]
    rates: dict[str, float] = {}
    try:
        env = {**server_env(url), **variant.env()}
        with process(args, env, workdir / f"server-{variant.name}-{store}.log") as server:
            wait_ready(f"{base}/api/health", headers, timeout=120)
            seeded = seed(base)
            team_paths = [f"/api/v1/teams/{seeded['team_a']}/agents/{seeded['mover']}",
                          f"/api/v1/teams/{seeded['team_b']}/agents/{seeded['mover']}"]  # fmt: skip
            simple = {
                "get": (f"{base}/api/v1/agents/{seeded['agent']}", None, None),
                "list": (f"{base}/api/v1/agents?limit=20", None, None),
                "heartbeat": (f"{base}/api/v1/workers/heartbeat", wrk_scripts.HEARTBEAT, None),
                "create": (f"{base}/api/v1/agents", wrk_scripts.CREATE_AGENT, [uuid.uuid4().hex[:8]]),
                "team": (base, wrk_scripts.ADD_TO_TEAM, team_paths),
            }
            for scenario in only:
                if scenario in simple:
                    target, script, script_args = simple[scenario]
                    spent = cpu_seconds(server.pid)
                    rates[scenario] = wrk(target, seconds, connections, headers, script, script_args)[0]
                elif scenario == "roundtrip":
                    round_trips(base, url, seconds / 2, ROUND_TRIP_WORKERS, seeded)  # a warm-up, not counted
                    spent = cpu_seconds(server.pid)
                    rates[scenario] = round_trips(base, url, seconds, ROUND_TRIP_WORKERS, seeded).rate
                else:
                    continue
                # the server's CPU (user and system) a request: what the machine's load changes least
                done = rates[scenario] * max(1, round(seconds))
                rates[f"{scenario} cpu_us"] = 1e6 * (cpu_seconds(server.pid) - spent) / max(1.0, done)
    finally:
        if name is not None:
            drop_postgres(postgres_url, name)
    return rates


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds a process has spent (/proc: Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def inprocess(variant: Variant, store: str, only: list[str], count: int, concurrency: int, postgres_url: str
              ) -> dict[str, float]:  # fmt: skip
    """Microseconds a request (CPU for the round trip's steps) of one variant, `benchmarks.inprocess` in a
    process of its own on a fresh database."""
    name = None
    command = [sys.executable, "-m", "benchmarks.inprocess", "--count", str(count), "--rounds", "3",
               "--concurrency", str(concurrency), "--cpu", "--only", *only]  # fmt: skip
    if store == "postgres":
        url, name = postgres_database(postgres_url)
        command += ["--database-url", url]
    try:
        output = subprocess.run(command, env={**os.environ, **variant.env()}, cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout  # fmt: skip
    finally:
        if name is not None:
            drop_postgres(postgres_url, name)
    figures = {key: float(value) for key, value in re.findall(r"^(\w+):\s+([\d.]+) us", output, re.MULTILINE)}
    for step, cpu in re.findall(r"(\w+) \d+ us \(CPU (\d+)\)", output):
        figures[f"{step} CPU"] = float(cpu)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", nargs="+", help="NAME=SOURCE_DIR [serve arguments], quoted as one argument")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument(
        "--only",
        default="get,list,heartbeat,roundtrip",
        help=f"a subset of {','.join(SCENARIOS)} ({','.join(INPROCESS_ONLY)} with --inprocess)",
    )
    parser.add_argument("--inprocess", action="store_true", help="benchmarks.inprocess instead of wrk")
    parser.add_argument("--count", type=int, default=1000, help="--inprocess: requests a round")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="--inprocess: requests in flight (above 1: the process's CPU a request)")  # fmt: skip
    parser.add_argument("--postgres-url", default=os.environ.get(
        "CONTROLPLANE_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"))  # fmt: skip
    arguments = parser.parse_args()
    variants = [Variant.parse(text) for text in arguments.variants]
    only = arguments.only.split(",")
    workdir = Path(tempfile.mkdtemp(prefix="controlplane-ab-"))
    print(f"machine: {machine()}; load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    with contextlib.nullcontext() if arguments.inprocess else BareApp(arguments.connections, workdir) as bare:
        for store in arguments.stores.split(","):
            for number in range(arguments.rounds):
                order = variants if number % 2 == 0 else variants[::-1]
                for variant in order:
                    if arguments.inprocess:
                        figures = inprocess(variant, store, only, arguments.count, arguments.concurrency,
                                            arguments.postgres_url)  # fmt: skip
                    else:
                        assert bare is not None
                        figures = {"bare": bare.measure(arguments.seconds).rate}
                        figures |= one_server(variant, store, arguments.seconds, arguments.connections, only,
                                              workdir, arguments.postgres_url)  # fmt: skip
                    figures["load"] = os.getloadavg()[0]
                    runs.setdefault((store, variant.name), []).append(figures)
                    print(f"{store} round {number + 1} {variant.name}: "
                          + ", ".join(f"{key} {value:,.1f}" for key, value in figures.items()), flush=True)  # fmt: skip
    print()
    for (store, name), every in runs.items():
        medians = {key: statistics.median(run[key] for run in every if key in run) for key in every[0]}
        print(f"median {store} {name}: " + ", ".join(f"{key} {value:,.1f}" for key, value in medians.items()))
    print(f"logs: {workdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
