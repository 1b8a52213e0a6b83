"""The console on a large organization: how long its overview and first page of executions take to draw in
Chromium, and its list calls' latency, with 100,000 executions in a SQLite store (docs/benchmarks.md, "The
console").

Seeds a SQLite file as `benchmarks.analytics` does (50 agents in 5 teams, 6 models; 100,000 executions over the
last 60 days, so that the overview's 24 hours and 7 days hold some 1,700 and 11,700 of them; a second organization
of 20,000), adds the queue they name, starts `controlplane serve` on it, then:

- times each API call the two pages make (`--runs` times after three warm-ups, one at a time): p50 and p99;
- drives Debian's Chromium (Playwright) to each page `--loads` times, a full page load each time, and reads the
  time from the navigation's start until the page is drawn (tiles, the three charts and the tables; the 25 rows).

    .venv/bin/python -m benchmarks.console [--executions 100000] [--runs 100] [--loads 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchmarks import analytics
from controlplane_adapters.environments.sql import environments, worker_queues
from controlplane_adapters.executions.table import executions as executions_table
from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.engine import create_engine

KEY = "console-bench-key"
ORG = analytics.ORG


def shifted(rows: list[dict[str, Any]], now: datetime) -> list[dict[str, Any]]:
    """The analytics benchmark's rows moved so that its last instant is now; the failed ones carry an error."""
    delta = now - analytics.NOW
    for row in rows:
        for name in ("created_at", "updated_at", "queued_at", "started_at", "finished_at"):
            if row[name] is not None:
                row[name] += delta
        row["worker_queue_id"] = f"{row['organization_id']}-q"
        if row["status"] in ("failed", "timed_out"):
            row["error"] = "the model answered 429: rate limited"
        row["usage"] = json.loads(row["usage"])
    return rows


async def seed(url: str, count: int) -> None:
    engine = create_engine(url)
    now = datetime.now(UTC)
    try:
        await migrate.upgrade(engine)
        async with engine.begin() as connection:
            for org in (ORG, analytics.OTHER):
                for table, rows in analytics.catalog(org).items():
                    await connection.execute(table.insert(), rows)
                at = now - timedelta(days=61)
                environment = {"id": f"{org}-env", "organization_id": org, "name": "production", "description": None,
                               "status": "active", "variables": {}, "metadata": {}, "created_at": at,
                               "updated_at": at}  # fmt: skip
                await connection.execute(environments.insert(), [environment])
                await connection.execute(worker_queues.insert(), [{
                    "id": f"{org}-q", "organization_id": org, "environment_id": f"{org}-env", "name": "default",
                    "description": None, "status": "active", "max_workers": None, "heartbeat_interval_seconds": 30,
                    "created_at": at, "updated_at": at}])  # fmt: skip
            rows = shifted(analytics.execution_rows(ORG, count, 1), now)
            rows += shifted(analytics.execution_rows(analytics.OTHER, count // 5, 2), now)
            for start in range(0, len(rows), 5000):
                await connection.execute(executions_table.insert(), rows[start : start + 5000])
        async with engine.connect() as connection:
            await connection.exec_driver_sql("ANALYZE")
    finally:
        await engine.dispose()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve(url: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SERVICE_API_KEY": KEY, "SERVICE_DEFAULT_ORG": ORG, "CONTROLPLANE_DATABASE_URL": url,
           "CONTROLPLANE_RATE_LIMIT_PER_MINUTE": "1000000"}  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "controlplane_http.cli", "serve", "--host", "127.0.0.1",
                                    "--port", str(port)], env=env, stdout=sink, stderr=subprocess.STDOUT)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", headers={"Authorization": f"Bearer {KEY}"}).is_success:
                return process
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    process.terminate()
    raise SystemExit(f"the server did not start:\n{log.read_text()}")


def calls(now: datetime) -> dict[str, tuple[str, dict[str, Any]]]:
    day, week = (now - timedelta(days=1)).isoformat(), (now - timedelta(days=7)).isoformat()
    return {
        "executions, first page (25)": ("/api/v1/executions", {"limit": 25}),
        "executions running (10)": ("/api/v1/executions", {"status": "running", "limit": 10}),
        "executions queued (count)": ("/api/v1/executions", {"status": "queued", "limit": 1}),
        "executions failed (5)": ("/api/v1/executions", {"status": "failed", "limit": 5}),
        "executions of one agent (25)": ("/api/v1/executions", {"agent_id": f"{ORG}-a07", "limit": 25}),
        "worker queues": ("/api/v1/worker-queues", {"limit": 100}),
        "workers": ("/api/v1/workers", {"limit": 100}),
        "agents (names)": ("/api/v1/agents", {"limit": 100}),
        "timeseries 24 h by status": ("/api/v1/analytics/timeseries",
                                      {"from": day, "bucket": "hour", "metric": "executions", "group_by": "status"}),
        "timeseries 24 h cost": ("/api/v1/analytics/timeseries", {"from": day, "bucket": "hour", "metric": "cost"}),
        "timeseries 7 d by status": ("/api/v1/analytics/timeseries",
                                     {"from": week, "bucket": "hour", "metric": "executions", "group_by": "status"}),
        "timeseries 7 d cost": ("/api/v1/analytics/timeseries", {"from": week, "bucket": "hour", "metric": "cost"}),
    }  # fmt: skip


def time_calls(base: str, runs: int) -> list[tuple[str, float, float]]:
    results = []
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {KEY}"}, timeout=30) as client:
        for name, (path, params) in calls(datetime.now(UTC)).items():
            for _ in range(3):
                client.get(path, params=params).raise_for_status()
            times = []
            for _ in range(runs):
                began = time.perf_counter()
                client.get(path, params=params).raise_for_status()
                times.append((time.perf_counter() - began) * 1000)
            times.sort()
            results.append((name, statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]))
    return results


DRAWN = {
    "overview": "document.querySelector('#tile-running .value') && document.querySelectorAll('#charts canvas').length"
    " === 3 && document.querySelector('#failures table') && document.querySelector('#queues table')",
    "executions": "document.querySelectorAll('#results tbody tr').length === 25",
}


def time_pages(base: str, loads: int) -> list[tuple[str, list[float]]]:
    from playwright.sync_api import sync_playwright

    results = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])  # fmt: skip
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{base}/dashboard")
        page.evaluate(f"sessionStorage.setItem('controlplane.credential', {json.dumps(KEY)})")
        for view, drawn in DRAWN.items():
            times = []
            for load in range(loads + 1):  # the first load warms the server's and the browser's caches
                page.goto("about:blank")
                page.goto(f"{base}/dashboard#/{view}")
                page.wait_for_function(f"() => Boolean({drawn})", polling="raf", timeout=30_000)
                if load:
                    times.append(page.evaluate("performance.now()"))
            results.append((view, times))
        browser.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--executions", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--loads", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite+aiosqlite:///{Path(directory) / 'console.db'}"
        began = time.perf_counter()
        asyncio.run(seed(url, args.executions))
        print(f"seeded {args.executions} executions (+{args.executions // 5}) in {time.perf_counter() - began:.1f} s")
        port = free_port()
        server = serve(url, port, Path(directory) / "server.log")
        try:
            base = f"http://127.0.0.1:{port}"
            print("| page | loads | median | slowest |\n| --- | --- | --- | --- |")
            for view, times in time_pages(base, args.loads):
                print(f"| {view} | {len(times)} | {statistics.median(times):.0f} ms | {max(times):.0f} ms |")
            print("\n| API call | p50 | p99 |\n| --- | --- | --- |")
            for name, p50, p99 in time_calls(base, args.runs):
                print(f"| {name} | {p50:.1f} ms | {p99:.1f} ms |")
        finally:
            server.terminate()
            server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
