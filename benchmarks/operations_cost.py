"""What the outermost middleware (request id, request metrics: controlplane_http/operations/requests.py) costs a
hot request, measured in one process: the same app with and without it, round after round, interleaved, so that
a busy machine's noise falls on both alike.

    .venv/bin/python -m benchmarks.operations_cost                      # SQLite file in a temp dir
    .venv/bin/python -m benchmarks.operations_cost --rounds 30 --count 1000

Prints, for each scenario, the best and the median of the rounds: CPU microseconds of this process a request.
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
from pathlib import Path
from typing import Any

from benchmarks.inprocess import Client, round_trip_steps, scenarios, seeded_app
from controlplane_http.operations.requests import Observed


async def cpu_per_request(
    client: Client, make: Callable[[int], tuple[str, str, bytes]], count: int, counter: itertools.count[int]
) -> float:
    """This process's CPU microseconds a request (its wall time is the machine's other work's too)."""
    start = time.process_time()
    for _ in range(count):
        method, path, body = make(next(counter))
        status, answer = await client.request(method, path, body)
        if status >= 400:
            raise RuntimeError(f"{method} {path}: {status} {answer[:200]!r}")
    return (time.process_time() - start) / count * 1e6


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        async with seeded_app(url) as (client, seeded):
            app: Any = client.app
            observed = app.asgi_handler
            assert isinstance(observed, Observed)
            variants = {"with": observed, "without": observed.app}
            gc.collect()
            gc.freeze()
            counter = itertools.count()
            chosen = scenarios(seeded)
            results: dict[tuple[str, str], list[float]] = {}
            for _ in range(args.rounds):
                for variant, handler in variants.items():
                    app.asgi_handler = handler
                    for name in args.only:
                        if name == "roundtrip":
                            steps = await round_trip_steps(Client(app), seeded, max(1, args.count // 8))
                            for step, (_, cpu) in steps.items():
                                results.setdefault((f"{step} (CPU)", variant), []).append(cpu)
                            continue
                        results.setdefault((name, variant), []).append(
                            await cpu_per_request(client, chosen[name], args.count, counter)
                        )
            app.asgi_handler = observed
    for name in dict.fromkeys(key[0] for key in results):
        line = []
        for variant in variants:
            values = results[(name, variant)]
            line.append(f"{variant} best {min(values):.1f} median {statistics.median(values):.1f}")
        print(f"{name}: " + "; ".join(line))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help="default: a SQLite file in a temporary directory")
    parser.add_argument("--count", type=int, default=1000, help="requests a round")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--only", nargs="*", default=["get", "list", "heartbeat", "roundtrip"])
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
