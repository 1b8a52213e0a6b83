"""What the bounds of issue #36 cost the hot routes: the same server with every bound that can be switched off
off (`database_statement_timeout_ms=0`: no statement timeout, on SQLite no progress handler) and with every bound
on (the default: 5,000 ms), side by side in one process, measured in alternating rounds (off then on, then on then
off), so that the machine's load drifts over both alike. Prints each scenario's median over the rounds, per store.

    .venv/bin/python -m benchmarks.bounds                        # SQLite (files in a temp dir)
    .venv/bin/python -m benchmarks.bounds --postgres-url postgresql+asyncpg://postgres@127.0.0.1:5432/postgres

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
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

from benchmarks import inprocess

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


async def main_async(args: argparse.Namespace, postgres: dict[str, str] | None) -> None:
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
