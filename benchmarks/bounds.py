"""What the bounds of issue #36 cost the hot routes: the same server with every bound that can be switched off
off (`database_statement_timeout_ms=0`: no statement timeout, on SQLite no progress handler) and with every bound
on (the default: 5,000 ms), side by side in one process, measured in alternating rounds (off then on, then on then
off), so that the machine's load drifts over both alike. Prints each scenario's median over the rounds, per store.

    .venv/bin/python -m benchmarks.bounds                        # SQLite (files in a temp dir)
    .venv/bin/python -m benchmarks.bounds --postgres-url postgresql+asyncpg://postgres@127.0.0.1:5432/postgres
    .venv/bin/python -m benchmarks.bounds --totals [--postgres-url ...]  # a list's total: max_counted

`--totals` times, statement by statement on the driver, a list's total as it was (every row counted) and as it
is (`statements.counted`: at most `offset` + 10,000), on an organization of 20 agents (the hot list's case) and
one of 200,000, alternating.

The other bounds are constants with no switch: a bearer token's length and a JWT's ids checked at the door,
the list page's `limit`, the body limit (all before the bounds of #36 too, or one comparison a request on these
routes); template, rendering, graph and analytics bounds are on other routes. The scenarios are
`benchmarks.inprocess`'s: get an agent, a list page of 20, a heartbeat, and the execution round trip (execute,
lease, events, complete: microseconds a round trip, wall time).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import sqlalchemy as sa
from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.postgresql.asyncpg import dialect as asyncpg_dialect

from benchmarks import inprocess
from controlplane_adapters.agents.sql import agents
from controlplane_adapters.settings.model import Settings
from controlplane_adapters.sql.statements import counted, counted_to
from controlplane_http.bootstrap import build_app

SCENARIOS = ("get", "list", "heartbeat")
Figures = dict[str, dict[str, list[tuple[float, float]]]]


async def measure(client: inprocess.Client, make: Callable[[int], tuple[str, str, bytes]], count: int,
                  counter: itertools.count[int]) -> tuple[float, float]:  # fmt: skip
    """(wall, CPU of this process) microseconds a request, over `count` requests one at a time."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        method, path, body = make(next(counter))
        status, answer = await client.request(method, path, body)
        if status >= 400:
            raise RuntimeError(f"{method} {path}: {status} {answer[:200]!r}")
    return (time.perf_counter() - wall) / count * 1e6, (time.process_time() - cpu) / count * 1e6


async def compare(urls: dict[str, str], count: int, rounds: int, timeouts: dict[str, int]) -> Figures:
    """{scenario: {"off"/"on": (wall, CPU) microseconds a request (a round trip), one pair a round}}."""
    results: Figures = {name: {"off": [], "on": []} for name in (*SCENARIOS, "roundtrip")}
    async with AsyncExitStack() as stack:
        apps = {
            setting: await stack.enter_async_context(
                inprocess.seeded_app(urls[setting], statement_timeout_ms=timeouts[setting])
            )
            for setting in ("off", "on")
        }
        counter = itertools.count()
        made = {setting: inprocess.scenarios(seeded) for setting, (_, seeded) in apps.items()}
        for setting, (client, seeded) in apps.items():  # warm-up: every path once
            await inprocess.round_trip_steps(client, seeded, 20)
            for name in SCENARIOS:
                await measure(client, made[setting][name], 100, counter)
        gc.collect()
        gc.freeze()
        for round_number in range(rounds):
            order = ("off", "on") if round_number % 2 == 0 else ("on", "off")
            for name in SCENARIOS:
                for setting in order:
                    client, _ = apps[setting]
                    results[name][setting].append(await measure(client, made[setting][name], count, counter))
            for setting in order:
                client, seeded = apps[setting]
                steps = await inprocess.round_trip_steps(client, seeded, max(1, count // 8))
                trip = (sum(wall for wall, _ in steps.values()), sum(cpu for _, cpu in steps.values()))
                results["roundtrip"][setting].append(trip)
    return results


def report(store: str, results: Figures) -> None:
    print(f"{store}: us a request (a round trip), median of {len(results['get']['off'])} alternating rounds")
    print("| scenario | wall, bounds off | wall, bounds on | on / off | CPU, bounds off | CPU, bounds on | on / off |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, figures in results.items():
        cells = []
        for kind in (0, 1):
            off = statistics.median(pair[kind] for pair in figures["off"])
            on = statistics.median(pair[kind] for pair in figures["on"])
            cells += [f"{off:.1f}", f"{on:.1f}", f"{on / off:.3f}"]
        print(f"| {name} | {' | '.join(cells)} |")
    for name, figures in results.items():
        for setting in ("off", "on"):
            print(f"  {name} {setting} (wall/CPU): {', '.join(f'{w:.0f}/{c:.0f}' for w, c in figures[setting])}")


TOTALS_ROWS = (20, 200_000)


def total_statements() -> dict[str, Any]:
    """A list's total before `max_counted` (a count of every row the filter keeps) and with it (`counted`): the
    agents' organization filter, the hot list's."""
    where = agents.c.organization_id == sa.bindparam("organization_id")
    exact = sa.select(sa.func.count()).select_from(agents).where(where)
    return {"exact": exact, "counted": counted(agents, where)}


def agent_values(rows: int, n: int, at: datetime) -> dict[str, Any]:
    return {"id": f"t{rows}-{n}", "organization_id": f"org-{rows}", "name": f"a{n}", "status": "active",
            "runtime": "default", "capabilities": [], "skill_ids": [], "configuration": {}, "created_at": at,
            "updated_at": at}  # fmt: skip


async def seed_agents(url: str) -> None:
    """Organizations `org-<rows>` of TOTALS_ROWS agents each, straight into the table."""
    app = build_app(Settings(database_url=url, service_api_key=inprocess.KEY))
    stop = await inprocess.lifespan(app)
    try:
        at = datetime(2026, 1, 1, tzinfo=UTC)
        for rows in TOTALS_ROWS:
            for start in range(0, rows, 10_000):
                async with app.state["ports"].uow() as uow:
                    values = [agent_values(rows, n, at) for n in range(start, min(rows, start + 10_000))]
                    await uow._open().execute(sa.insert(agents), values)
                    await uow.commit()
    finally:
        await stop()


async def totals(url: str, count: int, rounds: int) -> dict[tuple[int, str], list[float]]:
    """{(rows of the organization, "exact"/"counted"): microseconds a statement (wall), one figure a round}: each
    count run `count` times on the driver (sqlite3; asyncpg, prepared), the two alternating, on organizations of
    TOTALS_ROWS agents (a hundredth of `count` on the large one)."""
    await seed_agents(url)
    postgres = url.startswith("postgresql")
    dialect = asyncpg_dialect() if postgres else sqlite.dialect()
    compiled = {kind: statement.compile(dialect=dialect) for kind, statement in total_statements().items()}
    figures: dict[tuple[int, str], list[float]] = {(rows, kind): [] for rows in TOTALS_ROWS for kind in compiled}
    address = sa.make_url(url)
    if postgres:
        connection = await asyncpg.connect(address.set(drivername="postgresql").render_as_string(False))
        prepared = {kind: await connection.prepare(str(each)) for kind, each in compiled.items()}
    else:
        database = sqlite3.connect(address.database or "")
    try:
        for round_number in range(rounds):
            for rows in TOTALS_ROWS:
                kinds = list(compiled) if round_number % 2 == 0 else list(reversed(compiled))
                parameters = {"organization_id": f"org-{rows}", "counted": counted_to(0)}
                reps = count if rows < 1000 else max(1, count // 100)
                for kind in kinds:
                    bound = compiled[kind].construct_params(parameters)
                    values = [bound[name] for name in compiled[kind].positiontup or []]
                    sql = str(compiled[kind])
                    began = time.perf_counter()
                    for _ in range(reps):
                        if postgres:
                            await prepared[kind].fetchval(*values)
                        else:
                            database.execute(sql, values).fetchall()
                    figures[rows, kind].append((time.perf_counter() - began) / reps * 1e6)
    finally:
        if postgres:
            await connection.close()
        else:
            database.close()
    return figures


def report_totals(store: str, figures: dict[tuple[int, str], list[float]]) -> None:
    print(f"{store}: a list's total, us a statement (wall), median of {len(next(iter(figures.values())))} rounds")
    print("| agents of the organization | counted to the end | counted to 10,000 | counted / end |")
    print("| --- | --- | --- | --- |")
    for rows in TOTALS_ROWS:
        exact, capped = statistics.median(figures[rows, "exact"]), statistics.median(figures[rows, "counted"])
        print(f"| {rows:,} | {exact:.1f} | {capped:.1f} | {capped / exact:.3f} |")


async def main_async(args: argparse.Namespace, postgres: dict[str, str] | None) -> None:
    if args.totals:
        with tempfile.TemporaryDirectory() as tmp:
            report_totals(
                "SQLite", await totals(f"sqlite+aiosqlite:///{Path(tmp) / 'totals.db'}", args.count, args.rounds)
            )
        if postgres is not None:
            report_totals("Postgres", await totals(postgres["on"], args.count, args.rounds))
        return
    timeouts = {"off": args.off_ms, "on": args.on_ms}
    with tempfile.TemporaryDirectory() as tmp:
        urls = {setting: f"sqlite+aiosqlite:///{Path(tmp) / f'{setting}.db'}" for setting in ("off", "on")}
        report("SQLite", await compare(urls, args.count, args.rounds, timeouts))
    if postgres is not None:
        report("Postgres", await compare(postgres, args.count, args.rounds, timeouts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres-url", help="an admin URL: a database is created for each setting and dropped")
    parser.add_argument("--count", type=int, default=1000, help="requests a scenario a round")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--off-ms", type=int, default=0, help="the first server's statement timeout (0: none)")
    parser.add_argument("--on-ms", type=int, default=5000,
                        help="the second server's (as --off-ms: an A/A run, the harness's own bias)")  # fmt: skip
    parser.add_argument("--totals", action="store_true",
                        help="instead: a total counted to its end and to max_counted")  # fmt: skip
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    if not args.postgres_url:
        asyncio.run(main_async(args, None))
        return
    from benchmarks.run import drop_postgres, postgres_database

    made = {setting: postgres_database(args.postgres_url) for setting in ("off", "on")}
    try:
        asyncio.run(main_async(args, {setting: url for setting, (url, _) in made.items()}))
    finally:
        for _, name in made.values():
            drop_postgres(args.postgres_url, name)


if __name__ == "__main__":
    main()
