"""The benchmark harness keeps working: a smoke run (about a second a scenario) on SQLite, and the instruction
count drivers' round trips."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def test_the_benchmark_harness_runs() -> None:
    if shutil.which("wrk") is None:
        pytest.skip("wrk is not installed (make test installs it where apt-get is available)")
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--smoke", "--stores", "sqlite"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ") and "sqlite" in line]
    scenarios = {row.split("|")[1].strip() for row in rows}
    assert {"get agent by id", "list agents (20 a page)", "create agent", "worker heartbeat", "add agent to team",
            "execution round trip", "20 concurrent SSE streams", "20 cron jobs due at once: due -> queued",
            "workflow step hand-over"} <= scenarios  # fmt: skip
    for row in rows:
        cells = [cell.strip() for cell in row.split("|")[1:-1]]
        assert float(cells[2].split()[0].replace(",", "")) > 0, row
        assert cells[7] == "0", f"errors in {row}"  # scenario, store, rate, p50, p99, bare before, ratio, errors


def test_the_instruction_count_driver_runs(tmp_path: Path) -> None:
    """`benchmarks.instructions` runs this under valgrind twice (too slow for the suite): its round trips work."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'count.db'}"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.instructions", "--child", "3", "--database-url", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    completed = sqlite3.connect(tmp_path / "count.db").execute(
        "SELECT count(*) FROM executions WHERE status = 'completed'"
    )
    assert completed.fetchone()[0] == 53  # the 50 of the warm-up and the 3 counted


def test_the_postgres_instruction_count_driver_runs(postgres_url: str) -> None:
    """`benchmarks.pg_instructions` runs this against a Postgres under valgrind (too slow for the suite): its
    warm-up, its history of finished executions and its round trips up to a chosen step work."""
    import asyncpg
    import sqlalchemy as sa

    from tests.databases import run_sync, truncate

    run_sync(truncate(postgres_url))
    try:
        command = [sys.executable, "-m", "benchmarks.pg_instructions", "--child", "3", "--through", "lease",
                   "--history", "20", "--database-url", postgres_url]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert result.returncode == 0, result.stdout + result.stderr

        async def statuses() -> dict[str, int]:
            url = sa.make_url(postgres_url)
            connection = await asyncpg.connect(host=url.host, port=url.port, user=url.username, database=url.database)
            try:
                rows = await connection.fetch("SELECT status, count(*) FROM executions GROUP BY status")
            finally:
                await connection.close()
            return {row[0]: row[1] for row in rows}

        # the warm-up's 30 round trips, 20 finished ones of history, 3 executions run up to their lease, and the
        # 40 the seed queues on a queue of their own for the executions' list (benchmarks.inprocess.seed)
        assert run_sync(statuses()) == {"completed": 50, "queued": 40, "running": 3}
    finally:  # the shared database as the next test expects it
        run_sync(truncate(postgres_url))
