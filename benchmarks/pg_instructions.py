"""Instructions a round trip costs Postgres's backends, counted by valgrind: the database's half of a round trip.

`benchmarks.instructions` counts the server's half; on a shared two-core machine Postgres's backends spend about
as much CPU a round trip as the server does, and their rates drift with the machine as much as the server's.
This starts a private Postgres cluster (initdb in a temporary directory, its own port, autovacuum off) with every
process under callgrind, runs the execution round trip in-process against it (as `benchmarks.inprocess` does),
and sums the instructions of the backends the run used: a run of `--more` round trips minus a run of `--fewer`,
divided by the difference (start-up, migrations, seeding and the warm-up cancel out). The same statements count
the same within about 1%, so a change to a statement, an index or a plan can be judged in minutes.

    .venv/bin/python -m benchmarks.pg_instructions            # round trips
    .venv/bin/python -m benchmarks.pg_instructions --steps    # and each step alone: execute, lease, events, complete

Needs valgrind and PostgreSQL's server programs (Debian's postgresql package: /usr/lib/postgresql/N/bin, or
--pg-bindir); run as root, the cluster runs as the `postgres` user. What it does not count: the kernel (the WAL's
fsync, the network), the server process, the checkpointer and the WAL writer. After the warm-up the tables are
analyzed once and the periodic statistics task is off, so that a plan does not change between the two runs.
Each run takes a minute or two (Postgres runs some fifty times slower under valgrind).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from benchmarks.inprocess import STEPS

WARM_UP = 30
# Finished executions (and their events) written before the counted runs, as a server that has run a while has
# them: on a young table Postgres plans sequential scans and hash joins, which cost several times an index scan.
HISTORY = 5000
_HISTORY_SQL = """
INSERT INTO executions (id, organization_id, target_type, agent_id, team_id, worker_queue_id, prompt, status,
    response, error, usage, attempt, max_attempts, worker_id, lease_expires_at, cancel_requested, last_seq,
    created_at, updated_at, queued_at, started_at, finished_at)
SELECT gen_random_uuid()::text, x.organization_id, x.target_type, x.agent_id, x.team_id, x.worker_queue_id,
    x.prompt, x.status, x.response, x.error, x.usage, x.attempt, x.max_attempts, x.worker_id, x.lease_expires_at,
    x.cancel_requested, x.last_seq, x.created_at - g * interval '1 ms', x.updated_at, x.queued_at, x.started_at,
    x.finished_at
FROM (SELECT * FROM executions WHERE status = 'completed' LIMIT 1) AS x, generate_series(1, $1) AS g;
INSERT INTO execution_events (execution_id, seq, organization_id, type, data, attempt, created_at)
SELECT e.id, s, e.organization_id, 'message_chunk', '{"text": "x"}', 1, e.created_at
FROM executions AS e, generate_series(1, 5) AS s
WHERE NOT EXISTS (SELECT FROM execution_events AS o WHERE o.execution_id = e.id);
ANALYZE;
"""


def pg_bindir(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if not found:
        raise SystemExit("no PostgreSQL server programs under /usr/lib/postgresql: pass --pg-bindir")
    return found[-1].parent


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextlib.contextmanager
def valgrind_cluster(bindir: Path, workdir: Path) -> Iterator[str]:
    """A private cluster whose every process runs under callgrind; yields its admin URL."""
    from benchmarks.run import free_port, process

    if os.geteuid() == 0:
        shutil.chown(workdir, "postgres", "postgres")
    data, dumps = workdir / "data", workdir / "callgrind"
    dumps.mkdir()
    if os.geteuid() == 0:
        shutil.chown(dumps, "postgres", "postgres")
    initdb = [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"]
    subprocess.run(_as_postgres(initdb), check=True, capture_output=True)
    port = free_port()
    postgres = [
        "valgrind", "--tool=callgrind", f"--callgrind-out-file={dumps}/cg.%p", str(bindir / "postgres"),
        "-D", str(data), "-p", str(port), "-k", str(workdir), "-c", "listen_addresses=127.0.0.1",
        "-c", "autovacuum=off",
    ]  # fmt: skip
    with process(_as_postgres(postgres), {}, workdir / "postgres.log", stop_seconds=120):  # valgrind is slow to stop
        _wait_ready(port)
        yield f"postgresql+asyncpg://postgres@127.0.0.1:{port}/postgres"


def _wait_ready(port: int, timeout: float = 180) -> None:
    import asyncpg

    async def probe() -> None:
        connection = await asyncpg.connect(host="127.0.0.1", port=port, user="postgres", database="postgres")
        await connection.close()

    deadline = time.monotonic() + timeout
    while True:
        try:
            asyncio.run(probe())
            return
        except (OSError, asyncpg.PostgresError):
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def _dumps(workdir: Path) -> set[Path]:
    return set((workdir / "callgrind").glob("cg.*"))


def _settled(workdir: Path, before: set[Path], quiet: float = 5.0, timeout: float = 120) -> set[Path]:
    """The dump files that appeared since `before`, once no new one appeared for `quiet` seconds (a backend
    writes its file when it exits, some time after its client hung up)."""
    deadline = time.monotonic() + timeout
    seen = _dumps(workdir) - before
    still_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = _dumps(workdir) - before
        if now != seen:
            seen, still_since = now, time.monotonic()
        elif time.monotonic() - still_since >= quiet:
            break
    return seen


def _backend_instructions(files: set[Path]) -> int:
    """The instructions of the backends (the processes that ran a portal) among `files`."""
    total = 0
    for path in files:
        text = path.read_text(errors="replace")
        summary = re.search(r"^summary: (\d+)", text, re.MULTILINE)
        if summary and "PortalRun" in text:
            total += int(summary.group(1))
    return total


async def _round_trips(database_url: str, count: int, through: str, history: int, after: str = "") -> None:
    """Start the app, seed it, warm it up, add `history`, analyze, then run `count` round trips up to the step
    `through`."""
    import controlplane_http.bootstrap as bootstrap
    from benchmarks import inprocess

    bootstrap.STATISTICS_SECONDS = 10.0**9  # type: ignore[attr-defined]  # analyzed once, below: plans hold still
    async with inprocess.seeded_app(database_url) as (client, seeded):
        await inprocess.round_trip_steps(client, seeded, WARM_UP)
        import asyncpg
        import sqlalchemy as sa

        url = sa.make_url(database_url)
        connection = await asyncpg.connect(host=url.host, port=url.port, user=url.username, database=url.database)
        try:
            async with connection.transaction():
                for statement in _HISTORY_SQL.split(";"):
                    if statement.strip():
                        await connection.execute(statement, *([history] if "$1" in statement else []))
            if after:  # a change to try (indexes, settings) without a migration
                await connection.execute(after)
                await connection.execute("ANALYZE")
        finally:
            await connection.close()
        await inprocess.round_trip_steps(client, seeded, count, through)


def count_instructions(admin_url: str, workdir: Path, count: int, through: str, history: int = HISTORY,
                       keep: Path | None = None, after: str = "") -> int:  # fmt: skip
    """The backends' instructions of one run of `count` round trips (up to `through`) on a database of its own."""
    from benchmarks.run import drop_postgres, postgres_database

    url, name = postgres_database(admin_url)
    before = _dumps(workdir)
    command = [sys.executable, "-m", "benchmarks.pg_instructions", "--child", str(count), "--through", through,
               "--history", str(history), "--after", after, "--database-url", url]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"the run of {count} round trips failed:\n{result.stderr[-4000:]}")
    files = _settled(workdir, before)
    drop_postgres(admin_url, name)
    if keep is not None:  # for callgrind_annotate
        keep.mkdir(parents=True, exist_ok=True)
        for path in files:
            shutil.copy(path, keep / f"{through}.{count}.{path.name}")
    return _backend_instructions(files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fewer", type=int, default=50)
    parser.add_argument("--more", type=int, default=250)
    parser.add_argument("--steps", action="store_true", help="also each step: runs up to execute, lease, events")
    parser.add_argument("--history", type=int, default=HISTORY, help=f"finished executions first ({HISTORY})")
    parser.add_argument("--after", default="", help="SQL run after the history (an index to try, say)")
    parser.add_argument("--keep", type=Path, help="copy the runs' callgrind files into this directory")
    parser.add_argument("--pg-bindir", help="PostgreSQL's server programs (default: the newest under /usr/lib)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--through", default="complete", choices=STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--database-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        asyncio.run(_round_trips(args.database_url, args.child, args.through, args.history, args.after))
        return 0
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is missing (Debian's package)")
    bindir = pg_bindir(args.pg_bindir)
    upto = STEPS if args.steps else ("complete",)
    with tempfile.TemporaryDirectory() as tmp, valgrind_cluster(bindir, Path(tmp)) as admin_url:
        per: dict[str, float] = {}
        for through in upto:
            counts = [
                count_instructions(admin_url, Path(tmp), n, through, args.history, args.keep, args.after)
                for n in (args.fewer, args.more)
            ]
            per[through] = (counts[1] - counts[0]) / (args.more - args.fewer)
            print(f"through {through}: {per[through] / 1e6:.3f}M instructions ({args.fewer} and {args.more} runs: "
                  f"{counts[0]:,} and {counts[1]:,})", flush=True)  # fmt: skip
    if args.steps:
        previous = 0.0
        for step in STEPS:
            print(f"  {step}: {(per[step] - previous) / 1e3:,.0f}k")
            previous = per[step]
    print(f"postgres backends: {per['complete'] / 1e6:.3f}M instructions a round trip")
    return 0


if __name__ == "__main__":
    sys.exit(main())
