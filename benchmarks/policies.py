"""The latency policies add to execute: 10 enabled policies against none, in process (docs/benchmarks.md).

Each round sends `--count` executes of one agent one at a time through the ASGI app, alternately with no policy
and with ten enabled `execute` policies (every one evaluated, none denying: the execute goes through), and keeps
every request's wall time; the rounds interleave so that a busy machine weighs on both alike. It also times the
engine alone (the ten policies' evaluation of one input) and the gate with no policy for the action.

    .venv/bin/python -m benchmarks.policies                       # SQLite file in a temp dir
    .venv/bin/python -m benchmarks.policies --database-url postgresql+asyncpg://postgres@127.0.0.1/bench
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.inprocess import Client, seeded_app
from controlplane_adapters.clock import SystemClock, UuidGenerator
from controlplane_adapters.memory import MemoryStore
from controlplane_adapters.memory.bus import LocalEventBus
from controlplane_adapters.policies.rego import RegoPolicyEngine
from controlplane_domain.policies.entity import Action, Enforcement, Policy, Resource
from controlplane_domain.policies.gate import guard, input_document
from controlplane_domain.policies.runtime import PolicyRuntime
from controlplane_domain.ports import Ports
from controlplane_http.bootstrap import freeze_heap

WORDS = ["password", "exploit", "credit card", "ssn", "private key"]


def policies(queue_id: str) -> list[str]:
    """Ten modules of the kinds the tests use: forbidden words, business hours on another queue, roles, sizes."""
    modules = [
        f'package words{i}\nimport rego.v1\n\ndeny contains sprintf("no %s", [w]) if {{\n'
        f'    some w in ["{word}", "{word}-{i}"]\n    contains(lower(input.request.prompt), w)\n}}\n'
        for i, word in enumerate(WORDS)
    ]
    modules.append(
        'package hours\nimport rego.v1\n\ndeny contains "business hours only" if {\n'
        f'    input.request.worker_queue_id == "{"0" * 8}-{queue_id[9:]}"\n'
        '    [hour, _, _] := time.clock([input.time, "Europe/Paris"])\n    hour < 9\n}\n'
    )
    modules.append(
        'package roles\nimport rego.v1\n\ndeny contains "admins only" if not "admin" in input.principal.roles\n'
    )
    modules.append('package size\nimport rego.v1\n\ndeny contains "too long" if count(input.request.prompt) > 10000\n')
    modules.append('package stream\nimport rego.v1\n\ndeny contains "no streams" if input.request.stream == "never"\n')
    modules.append(
        'package kinds\nimport rego.v1\n\ndeny contains "teams only" if {\n    input.resource.type == "robot"\n}\n'
    )
    return modules


CPU: list[float] = []
"""The last round's executes' CPU time (this process's; what a busy machine's other processes do not add)."""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def execute_round(client: Client, agent: str, queue: str, count: int) -> tuple[list[float], float]:
    """Each execute's wall time, and the round's (with what ran between them: the decision log's flushes)."""
    body = json.dumps({"prompt": "Summarise the incident report for the on-call team", "worker_queue_id": queue})
    times, cpu = [], []
    began = time.perf_counter()
    for _ in range(count):
        started, used = time.perf_counter(), time.process_time()
        status, answer = await client.request("POST", f"/api/v1/agents/{agent}/execute", body.encode())
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
        assert status == 201, answer
        await asyncio.sleep(0)  # the background tasks run between requests, as in a server
    CPU.extend(cpu)
    return times, time.perf_counter() - began


async def set_policies(client: Client, ids: list[str], enabled: bool) -> None:
    for policy_id in ids:
        status, answer = await client.request(
            "PATCH", f"/api/v1/policies/{policy_id}", json.dumps({"enabled": enabled}).encode()
        )
        assert status == 200, answer


async def end_to_end(database_url: str, count: int, rounds: int) -> tuple[dict[str, list[float]], dict[str, float]]:
    samples: dict[str, list[float]] = {"none": [], "ten": [], "none cpu": [], "ten cpu": []}
    elapsed = {"none": 0.0, "ten": 0.0}
    async with seeded_app(database_url) as (client, seeded):
        ids = []
        for index, module in enumerate(policies(seeded["queue"])):
            body = {"name": f"bench-{index}", "rego": module, "actions": ["execute"], "enabled": False}
            status, answer = await client.request("POST", "/api/v1/policies", json.dumps(body).encode())
            assert status == 201, answer
            ids.append(json.loads(answer)["id"])
        await execute_round(client, seeded["agent"], seeded["queue"], count // 4)  # warm up
        freeze_heap()  # as the server does once started (bootstrap.py)
        for _ in range(rounds):
            for mode in ("none", "ten"):
                await set_policies(client, ids, mode == "ten")
                await execute_round(client, seeded["agent"], seeded["queue"], 20)  # the cache filled again
                CPU.clear()
                times, spent = await execute_round(client, seeded["agent"], seeded["queue"], count)
                samples[mode] += times
                samples[f"{mode} cpu"] += CPU
                elapsed[mode] += spent
    return samples, elapsed


def engine_alone(count: int) -> tuple[list[float], list[float]]:
    """The ten policies' evaluation of one input (what `guard` adds in CPU), and `guard` with no policy."""
    now = SystemClock().now()
    modules = policies("00000000-0000-0000-0000-000000000000")
    stored = [
        Policy(id=f"p{i}", organization_id="org", name=f"p{i}", description=None, rego=rego, enabled=True,
               enforcement=Enforcement.ENFORCE, actions=(Action.EXECUTE,), created_at=now, updated_at=now)
        for i, rego in enumerate(modules)
    ]  # fmt: skip
    prepared = RegoPolicyEngine().prepare(stored)
    request = {"prompt": "Summarise the incident report", "worker_queue_id": "q", "stream": False}
    evaluations = []
    for _ in range(count):
        started = time.perf_counter()
        document = input_document(Action.EXECUTE, "org", None, Resource("agent", "a"), request, SystemClock().now())
        outcomes = prepared.evaluate(document)
        evaluations.append(time.perf_counter() - started)
        assert all(outcome.allowed for outcome in outcomes[:-4]), outcomes
    bus = LocalEventBus()
    ports = Ports(uow=MemoryStore().unit_of_work, clock=SystemClock(), ids=UuidGenerator(), bus=bus,
                  policies=PolicyRuntime(RegoPolicyEngine(), bus))  # fmt: skip
    assert ports.policies is not None
    ports.policies.cache.learned("org", ports.policies.cache.generation, [])

    async def gates() -> list[float]:
        times = []
        for _ in range(count):
            started = time.perf_counter()
            await guard(ports, Action.EXECUTE, "org", None, Resource("agent", "a"), request)
            times.append(time.perf_counter() - started)
        return times

    return evaluations, asyncio.run(gates())


def report(label: str, values: list[float]) -> str:
    micro = [value * 1e6 for value in values]
    return (f"{label:28s} n={len(micro):6d}  p50 {percentile(micro, 0.5):8.1f} us"
            f"  p99 {percentile(micro, 0.99):8.1f} us"
            f"  mean {statistics.fmean(micro):8.1f} us")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help="default: a SQLite file in a temporary directory")
    parser.add_argument("--count", type=int, default=1000, help="executes a round and mode")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    evaluations, gates = engine_alone(args.count * 2)
    print(report("engine: 10 policies", evaluations))
    print(report("gate: no policy", gates))
    with tempfile.TemporaryDirectory() as directory:
        url = args.database_url or f"sqlite+aiosqlite:///{Path(directory) / 'bench.db'}"
        samples, elapsed = asyncio.run(end_to_end(url, args.count, args.rounds))
    print(report("execute, no policy", samples["none"]))
    print(report("execute, 10 policies", samples["ten"]))
    print(report("execute CPU, no policy", samples["none cpu"]))
    print(report("execute CPU, 10 policies", samples["ten cpu"]))
    for kind in ("", " cpu"):
        for q in (0.5, 0.99):
            added = (percentile(samples["ten" + kind], q) - percentile(samples["none" + kind], q)) * 1e6
            print(f"added{kind or ' wall'} at p{int(q * 100)}: {added:.1f} us")
    per = {mode: elapsed[mode] / len(samples[mode]) * 1e6 for mode in ("none", "ten")}
    print(f"a round's time per execute, flushes included: none {per['none']:.1f} us, ten {per['ten']:.1f} us")


if __name__ == "__main__":
    main()
