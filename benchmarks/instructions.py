"""Instructions a round trip in the server process, counted by valgrind: a measure that holds still.

On a shared machine whose speed drifts by a quarter within minutes, wrk rates cannot tell a change of a few
percent; callgrind counts the instructions the process executes (user space only), and the same code counts
the same within about 1%. The round trips (execute, lease, events, complete) go through the ASGI app in-process,
one at a time, as in `benchmarks.inprocess`; the count is the difference between a run of `--more` and a run of
`--fewer` round trips (start-up, migrations and seeding cancel out), divided by the difference.

    .venv/bin/python -m benchmarks.instructions                       # SQLite (a file in a temp dir)
    .venv/bin/python -m benchmarks.instructions --postgres-url postgresql+asyncpg://postgres@127.0.0.1:5432/postgres

Needs valgrind (Debian's package). What it does not count: the kernel (system calls, the network), the
database server's own process, HTTP parsing by uvicorn (the app is called directly), waiting. Background
tasks run on the clock, and valgrind slows the process some fifty times, so on Postgres the statistics and
peer-counting tasks weigh more here than in the server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path


async def run_round_trips(database_url: str, count: int, scenario: str = "roundtrip") -> None:
    """Start the app, seed it, warm it up, then run `count` round trips, or requests of one of
    `benchmarks.inprocess`'s scenarios (the part whose cost is wanted)."""
    from benchmarks import inprocess
    from controlplane_http.bootstrap import freeze_heap

    async with inprocess.seeded_app(database_url) as (client, seeded):
        if scenario == "roundtrip":
            await inprocess.round_trip_steps(client, seeded, 50)
            freeze_heap()  # as `serve` does once started
            await inprocess.round_trip_steps(client, seeded, count)
            return
        make = inprocess.scenarios(seeded)[scenario]
        for i in range(50):
            await client.request(*make(i))
        freeze_heap()
        for i in range(50, 50 + count):
            status, answer = await client.request(*make(i))
            assert status < 400, answer


def count_instructions(database_url: str, count: int, workdir: Path, scenario: str = "roundtrip") -> int:
    """Instructions of one whole run (start-up included) under callgrind."""
    out = workdir / f"callgrind.{count}.out"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-m",
               "benchmarks.instructions", "--child", str(count), "--database-url", database_url,
               "--scenario", scenario]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    match = re.search(r"Collected : (\d+)", result.stderr)
    if result.returncode != 0 or match is None:
        raise RuntimeError(f"the run of {count} round trips failed:\n{result.stderr[-4000:]}")
    return int(match.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres-url", help="an admin URL: a database is created for each run and dropped")
    parser.add_argument("--fewer", type=int, default=100)
    parser.add_argument("--more", type=int, default=300)
    parser.add_argument(
        "--scenario",
        default="roundtrip",
        help="roundtrip, or a scenario of benchmarks.inprocess (get, list, executions, ...)",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--database-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:  # one run, under valgrind
        asyncio.run(run_round_trips(args.database_url, args.child, args.scenario))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        counts = {}
        for count in (args.fewer, args.more):  # one after the other: valgrind's count does not depend on load
            if args.postgres_url:
                from benchmarks.run import drop_postgres, postgres_database

                url, name = postgres_database(args.postgres_url)
                try:
                    counts[count] = count_instructions(url, count, workdir, args.scenario)
                finally:
                    drop_postgres(args.postgres_url, name)
            else:
                url = f"sqlite+aiosqlite:///{workdir / f'bench-{uuid.uuid4().hex[:8]}.db'}"
                counts[count] = count_instructions(url, count, workdir, args.scenario)
    store = "postgres" if args.postgres_url else "sqlite"
    per_trip = (counts[args.more] - counts[args.fewer]) / (args.more - args.fewer)
    print(f"{store}: {per_trip / 1e6:.3f}M instructions a {args.scenario} ({args.fewer} and {args.more}: "
          f"{counts[args.fewer]:,} and {counts[args.more]:,})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
