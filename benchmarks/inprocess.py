"""The per-request CPU cost of the hot paths, without network or load generator.

Calls the ASGI app directly in a loop (one request at a time) and prints microseconds per request, best of
several rounds; `--profile` writes a cProfile of one scenario. This is how the in-process figures of
docs/benchmarks.md were measured:

    .venv/bin/python -m benchmarks.inprocess                 # all scenarios, SQLite file in a temp dir
    .venv/bin/python -m benchmarks.inprocess --database-url postgresql+asyncpg://postgres@127.0.0.1/bench
    .venv/bin/python -m benchmarks.inprocess --only heartbeat --profile /tmp/hb.prof
    .venv/bin/python -m benchmarks.inprocess --only get heartbeat --concurrency 16 --database-url ...

With `--concurrency N`, N requests are in flight at once (as under load, where Postgres readers coalesce their
point reads) and the figure is this process's CPU a request.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import itertools
import json
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from benchmarks.bare_app import app as bare_app
from controlplane_adapters.settings.model import Settings
from controlplane_domain.policies.ports import PolicyEngine
from controlplane_http.bootstrap import build_app

KEY = "inprocess-bench-key"
WEBHOOK_KEY = "YmVuY2gtd2ViaG9va3Mta2V5LTMyLWJ5dGVzLWxvbmc="  # seals the webhook's secret (--webhook)
Asgi = Callable[..., Any]


class Client:
    """Sends one HTTP request through an ASGI app and collects the answer."""

    def __init__(self, app: Asgi) -> None:
        self.app = app

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        raw_path, _, query = path.partition("?")
        headers = [(b"host", b"bench"), (b"authorization", f"Bearer {KEY}".encode())]
        if body:
            headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
            "scheme": "http", "path": raw_path, "raw_path": raw_path.encode(), "query_string": query.encode(),
            "root_path": "", "headers": headers, "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8001),
            "state": {},
        }  # fmt: skip
        sent = False
        status = 0
        chunks: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.Event().wait()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        return status, b"".join(chunks)


async def lifespan(app: Asgi) -> Callable[[], Any]:
    """Runs the app's start-up; returns a coroutine function that runs its shutdown."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
    task = asyncio.create_task(app(scope, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    message = await outbox.get()
    if message["type"] != "lifespan.startup.complete":
        raise RuntimeError(f"start-up failed: {message}")

    async def stop() -> None:
        await inbox.put({"type": "lifespan.shutdown"})
        await outbox.get()
        await task

    return stop


async def seed(client: Client) -> dict[str, str]:
    ids = []
    for i in range(40):
        status, body = await client.request("POST", "/api/v1/agents", json.dumps({"name": f"seed-{i}"}).encode())
        assert status == 201, body
        ids.append(json.loads(body)["id"])
    skills = []
    for kind in ("shell", "web"):
        status, body = await client.request("POST", "/api/v1/skills", json.dumps({"name": kind, "type": kind}).encode())
        skills.append(json.loads(body)["id"])
    status, body = await client.request("POST", "/api/v1/projects", b'{"name": "bench", "key": "BENCH"}')
    project = json.loads(body)["id"]
    teams = []
    for i in range(20):  # (each in a project, with two skills: what a team's answer reads besides its members)
        team = {"name": f"team-{i}", "skill_ids": skills}
        status, body = await client.request("POST", "/api/v1/teams", json.dumps(team).encode())
        teams.append(json.loads(body)["id"])
        await client.request("POST", f"/api/v1/projects/{project}/teams/{teams[-1]}", b"")
    status, body = await client.request("POST", "/api/v1/environments", b'{"name": "bench"}')
    environment = json.loads(body)["id"]
    status, body = await client.request("POST", f"/api/v1/environments/{environment}/worker-queues", b'{"name": "q"}')
    queue = json.loads(body)["id"]
    # 40 executions on a queue of their own (the round trip leases from `queue`): the executions' list reads them
    status, body = await client.request("POST", f"/api/v1/environments/{environment}/worker-queues", b'{"name": "l"}')
    listed = json.loads(body)["id"]
    execute = json.dumps({"prompt": "listed", "worker_queue_id": listed}).encode()
    for _ in range(40):
        status, body = await client.request("POST", f"/api/v1/agents/{ids[2]}/execute", execute)
        assert status == 201, body
    return {"agent": ids[0], "mover": ids[1], "team_a": teams[0], "team_b": teams[1], "queue": queue}


@asynccontextmanager
async def seeded_app(
    database_url: str,
    *,
    fast_lane: bool = True,
    agent_context: bool = False,
    webhook: bool = False,
    statement_timeout_ms: int = 5000,
    policy_engine: PolicyEngine | None = None,
) -> AsyncIterator[tuple[Client, dict[str, str]]]:
    """The app on `database_url`, started (its lifespan) and seeded (`agent_context`: with a context set on the
    agent the round trip executes; `webhook`: with a webhook of every event, whose deliveries are written to the
    outbox but not sent: the app delivers nothing here); stopped on leaving."""
    settings = Settings(database_url=database_url, service_api_key=KEY, rate_limit_per_minute=10**9,
                        worker_rate_limit_per_minute=10**9, service_rate_limit_per_minute=10**9,
                        fast_lane=fast_lane, webhooks_deliver=False,
                        secrets_key=WEBHOOK_KEY if webhook else None,
                        database_statement_timeout_ms=statement_timeout_ms)  # fmt: skip
    app = build_app(settings, policy_engine=policy_engine)
    stop = await lifespan(app)
    try:
        client = Client(app)
        seeded = await seed(client)
        if agent_context:
            body = json.dumps(AGENT_CONTEXT).encode()
            status, answer = await client.request("PUT", f"/api/v1/agents/{seeded['agent']}/context", body)
            assert status == 200, answer
        if webhook:
            body = json.dumps({"url": "https://93.184.215.14/bench", "events": ["*"]}).encode()
            status, answer = await client.request("POST", "/api/v1/webhooks", body)
            assert status == 201, answer
        yield client, seeded
    finally:
        await stop()


STEPS = ("execute", "lease", "events", "complete")
AGENT_CONTEXT = {
    "instructions": "Answer in English. Cite the runbook when you restart a service." * 4,
    "knowledge": [{"name": "runbook", "text": "Restart with systemctl restart app." * 8},
                  {"name": "wiki", "uri": "https://wiki.example/ops"}],
    "variables": {"REGION": "eu-west-1", "TIER": "gold", "OWNER": "ops"},
    "storage_paths": ["reports/"],
}  # fmt: skip


async def round_trip_steps(
    client: Client, seeded: dict[str, str], count: int, through: str = "complete"
) -> dict[str, tuple[float, float]]:
    """Microseconds a step of the execution round trip (execute, lease, events, complete): (wall, CPU of this
    process). On Postgres the wall time includes the database's; the CPU time is the server's alone. `through`:
    the last step each round trip runs (the steps after it count 0)."""
    wall = dict.fromkeys(STEPS, 0.0)
    cpu = dict(wall)
    chunk = {"type": "message_chunk", "data": {"text": "x"}}

    def mark() -> tuple[float, float]:
        return time.perf_counter(), time.process_time()

    def spent(step: str, since: tuple[float, float]) -> tuple[float, float]:
        now = mark()
        wall[step] += now[0] - since[0]
        cpu[step] += now[1] - since[1]
        return now

    last = STEPS.index(through)
    for _ in range(count):
        start = mark()
        body = json.dumps({"prompt": "p", "worker_queue_id": seeded["queue"]}).encode()
        status, answer = await client.request("POST", f"/api/v1/agents/{seeded['agent']}/execute", body)
        assert status == 201, answer
        start = spent("execute", start)
        if last < 1:
            continue
        body = json.dumps({"worker_id": "w", "wait_seconds": 0}).encode()
        status, answer = await client.request("POST", f"/api/v1/worker-queues/{seeded['queue']}/lease", body)
        assert status == 200, answer
        lease = json.loads(answer)
        execution, attempt = lease["execution"]["id"], lease["attempt"]
        start = spent("lease", start)
        if last < 2:
            continue
        body = json.dumps({"worker_id": "w", "attempt": attempt, "events": [chunk] * 3}).encode()
        status, answer = await client.request("POST", f"/api/v1/executions/{execution}/events", body)
        assert status < 300, answer
        start = spent("events", start)
        if last < 3:
            continue
        body = json.dumps({"worker_id": "w", "attempt": attempt, "status": "completed", "response": "ok"}).encode()
        status, answer = await client.request("POST", f"/api/v1/executions/{execution}/complete", body)
        assert status == 200, answer
        spent("complete", start)
    return {name: (wall[name] / count * 1e6, cpu[name] / count * 1e6) for name in wall}


def scenarios(seeded: dict[str, str]) -> dict[str, Callable[[int], tuple[str, str, bytes]]]:
    agent = seeded["agent"]
    prefix = time.monotonic_ns()

    def heartbeat(i: int) -> tuple[str, str, bytes]:
        body = {"worker_id": f"w-{i % 16}", "environment_name": "bench", "tasks_processed": i}
        return "POST", "/api/v1/workers/heartbeat", json.dumps(body).encode()

    def team(i: int) -> tuple[str, str, bytes]:
        which = seeded["team_a"] if i % 2 else seeded["team_b"]
        return "POST", f"/api/v1/teams/{which}/agents/{seeded['mover']}", b""

    return {
        "get": lambda i: ("GET", f"/api/v1/agents/{agent}", b""),
        "list": lambda i: ("GET", "/api/v1/agents?limit=20", b""),
        "executions": lambda i: ("GET", "/api/v1/executions?limit=20", b""),
        "create": lambda i: ("POST", "/api/v1/agents", json.dumps({"name": f"c-{prefix}-{i}"}).encode()),
        "heartbeat": heartbeat,
        "team": team,
        "team_get": lambda i: ("GET", f"/api/v1/teams/{seeded['team_a']}", b""),
        "team_list": lambda i: ("GET", "/api/v1/teams?limit=20", b""),
    }


async def measure(client: Client, make: Callable[[int], tuple[str, str, bytes]], count: int, rounds: int,
                  counter: itertools.count[int], concurrency: int = 1, cpu_time: bool = False) -> float:  # fmt: skip
    """Microseconds a request, best of `rounds`: wall time, or with `concurrency` > 1 (that many requests in
    flight at once, as under load) or `cpu_time` this process's CPU time, since the database's wait then
    overlaps (or, one at a time, is not this process's cost)."""
    best = float("inf")

    async def one() -> None:
        method, path, body = make(next(counter))
        status, answer = await client.request(method, path, body)
        if status >= 400:
            raise RuntimeError(f"{method} {path}: {status} {answer[:200]!r}")

    for _ in range(rounds):
        start, cpu = time.perf_counter(), time.process_time()
        if concurrency == 1:
            for _ in range(count):
                await one()
        else:
            for _ in range(max(1, count // concurrency)):
                await asyncio.gather(*(one() for _ in range(concurrency)))
        spent = time.perf_counter() - start if concurrency == 1 and not cpu_time else time.process_time() - cpu
        best = min(best, spent / (count if concurrency == 1 else max(1, count // concurrency) * concurrency))
    return best * 1e6


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        async with seeded_app(
            url,
            fast_lane=not args.no_fast_lane,
            agent_context=args.agent_context,
            webhook=args.webhook,
            statement_timeout_ms=args.statement_timeout_ms,
        ) as (
            client,
            seeded,
        ):
            gc.collect()
            gc.freeze()
            bare = Client(bare_app)
            counter = itertools.count()
            ceiling = await measure(bare, lambda i: ("GET", "/constant", b""), args.count, args.rounds, counter)
            print(f"bare: {ceiling:7.1f} us")
            if not args.only or "roundtrip" in args.only:
                profiler = cProfile.Profile() if args.profile else None
                if profiler is not None:
                    profiler.enable()
                steps = await round_trip_steps(client, seeded, max(1, args.count // 4))
                if profiler is not None:
                    profiler.disable()
                    profiler.dump_stats(args.profile)
                    print(f"profile of the round trip written to {args.profile}")
                print(
                    "round trip: "
                    + ", ".join(f"{name} {wall:.0f} us (CPU {cpu:.0f})" for name, (wall, cpu) in steps.items())
                )
            chosen = scenarios(seeded)
            for name, make in chosen.items():
                if args.only and name not in args.only:
                    continue
                if args.profile:
                    profiler = cProfile.Profile()
                    profiler.enable()
                    await measure(client, make, args.count, 1, counter)
                    profiler.disable()
                    profiler.dump_stats(args.profile)
                    print(f"profile of {name} written to {args.profile}")
                    continue
                spent = await measure(client, make, args.count, args.rounds, counter, args.concurrency, args.cpu)
                print(f"{name}: {spent:7.1f} us" + (" (CPU)" if args.concurrency > 1 or args.cpu else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help="default: a SQLite file in a temporary directory")
    parser.add_argument("--count", type=int, default=2000, help="requests a round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--only", nargs="*", help="get list executions create heartbeat team team_get team_list roundtrip"
    )
    parser.add_argument("--no-fast-lane", action="store_true", help="every request through Litestar's router")
    parser.add_argument("--statement-timeout-ms", type=int, default=5000, help="0: no statement timeout")
    parser.add_argument("--agent-context", action="store_true",
                        help="set a context on the agent (each execute then stores a resolved context)")  # fmt: skip
    parser.add_argument("--webhook", action="store_true",
                        help="a webhook of every event (each completion and error then writes a delivery)")  # fmt: skip
    parser.add_argument("--profile", help="write a cProfile of the chosen scenario to this file")
    parser.add_argument("--cpu", action="store_true", help="this process's CPU a request, also one at a time")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="requests in flight at once (then CPU a request instead of wall time)")  # fmt: skip
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
