"""The latency policies add to execute: 10 enabled policies against none (docs/benchmarks.md), with the policies
evaluated in the server's process (`inprocess`: regopy called directly, as before the sandbox) and in the policy
processes (`sandbox`: sandbox.py, what the server runs), in the same run.

Each round sends `--count` executes of one agent one at a time through the ASGI app (one app per engine),
alternately with no policy and with ten enabled `execute` policies (every one evaluated, none denying: the execute
goes through), and keeps every request's wall time; the rounds interleave so that a busy machine weighs on every
mode alike. It also times each engine alone (the ten policies' evaluation of one input) and the gate with no policy
for the action.

    .venv/bin/python -m benchmarks.policies                       # SQLite file in a temp dir
    .venv/bin/python -m benchmarks.policies --database-url postgresql+asyncpg://postgres@127.0.0.1/bench
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.inprocess import Client, seeded_app
from controlplane_adapters.clock import SystemClock, UuidGenerator
from controlplane_adapters.memory.bus import LocalEventBus
from controlplane_adapters.memory.store import MemoryStore
from controlplane_adapters.policies.rego import RegoPolicyEngine
from controlplane_adapters.policies.sandbox import SandboxedPolicyEngine
from controlplane_domain.policies.entity import Action, Enforcement, Policy, Resource
from controlplane_domain.policies.gate import guard, input_document
from controlplane_domain.policies.ports import PolicyEngine
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
ROUNDS: dict[str, list[list[float]]] = {}
"""Per engine and mode, each round's wall times (for the medians of the rounds' percentiles)."""
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


ENGINES = ("inprocess", "sandbox")


async def end_to_end(database_url: str, count: int, rounds: int) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Per engine and mode (`inprocess none`, `sandbox ten`, ...), each execute's wall and CPU time."""
    samples: dict[str, list[float]] = {}
    elapsed: dict[str, float] = {}
    sandbox = SandboxedPolicyEngine()
    url = {"inprocess": database_url, "sandbox": database_url.replace("bench.db", "bench-sandbox.db")}
    try:
        async with (
            seeded_app(url["inprocess"], policy_engine=RegoPolicyEngine()) as inprocess,
            seeded_app(url["sandbox"], policy_engine=sandbox) as sandboxed,
        ):
            apps = {"inprocess": inprocess, "sandbox": sandboxed}
            ids: dict[str, list[str]] = {}
            for engine, (client, seeded) in apps.items():
                ids[engine] = []
                for index, module in enumerate(policies(seeded["queue"])):
                    body = {"name": f"bench-{index}", "rego": module, "actions": ["execute"], "enabled": False}
                    status, answer = await client.request("POST", "/api/v1/policies", json.dumps(body).encode())
                    assert status == 201, answer
                    ids[engine].append(json.loads(answer)["id"])
                await execute_round(client, seeded["agent"], seeded["queue"], count // 4)  # warm up
            freeze_heap()  # as the server does once started (bootstrap.py)
            for _ in range(rounds):
                for engine, (client, seeded) in apps.items():
                    for mode in ("none", "ten"):
                        await set_policies(client, ids[engine], mode == "ten")
                        await execute_round(client, seeded["agent"], seeded["queue"], 20)  # the cache filled again
                        CPU.clear()
                        times, spent = await execute_round(client, seeded["agent"], seeded["queue"], count)
                        samples.setdefault(f"{engine} {mode}", []).extend(times)
                        samples.setdefault(f"{engine} {mode} cpu", []).extend(CPU)
                        ROUNDS.setdefault(f"{engine} {mode}", []).append(times)
                        elapsed[f"{engine} {mode}"] = elapsed.get(f"{engine} {mode}", 0.0) + spent
    finally:
        await sandbox.stop()
    return samples, elapsed


def stored_policies() -> list[Policy]:
    now = SystemClock().now()
    modules = policies("00000000-0000-0000-0000-000000000000")
    return [
        Policy(id=f"p{i}", organization_id="org", name=f"p{i}", description=None, rego=rego, enabled=True,
               enforcement=Enforcement.ENFORCE, actions=(Action.EXECUTE,), created_at=now, updated_at=now)
        for i, rego in enumerate(modules)
    ]  # fmt: skip


async def engine_alone(engine: PolicyEngine, count: int) -> list[float]:
    """The ten policies' evaluation of one input (what `guard` adds)."""
    prepared = engine.prepare(stored_policies())
    request = {"prompt": "Summarise the incident report", "worker_queue_id": "q", "stream": False}
    evaluations = []
    for index in range(count + 50):
        started = time.perf_counter()
        document = input_document(Action.EXECUTE, "org", None, Resource("agent", "a"), request, SystemClock().now())
        outcomes = await prepared.evaluate(document)
        if index >= 50:  # (the first ones start the policy processes)
            evaluations.append(time.perf_counter() - started)
        assert all(outcome.allowed for outcome in outcomes[:-4]), outcomes
    return evaluations


async def engines_alone(count: int) -> dict[str, list[float]]:
    sandbox = SandboxedPolicyEngine()
    try:
        inprocess, sandboxed = [], []
        for _ in range(4):  # interleaved
            inprocess += await engine_alone(RegoPolicyEngine(), count // 4)
            sandboxed += await engine_alone(sandbox, count // 4)
        return {"inprocess": inprocess, "sandbox": sandboxed}
    finally:
        await sandbox.stop()


def gate_without_policy(count: int) -> list[float]:
    request = {"prompt": "Summarise the incident report", "worker_queue_id": "q", "stream": False}
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

    return asyncio.run(gates())


def report(label: str, values: list[float]) -> str:
    micro = [value * 1e6 for value in values]
    return (f"{label:28s} n={len(micro):6d}  p50 {percentile(micro, 0.5):8.1f} us"
            f"  p99 {percentile(micro, 0.99):8.1f} us"
            f"  mean {statistics.fmean(micro):8.1f} us")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help="default: SQLite files in a temporary directory (one per engine)")
    parser.add_argument("--count", type=int, default=1000, help="executes a round and mode")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    print("load average at the start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    for engine, evaluations in asyncio.run(engines_alone(args.count * 2)).items():
        print(report(f"engine {engine}: 10 policies", evaluations))
    print(report("gate: no policy", gate_without_policy(args.count * 2)))
    with tempfile.TemporaryDirectory() as directory:
        url = args.database_url or f"sqlite+aiosqlite:///{Path(directory) / 'bench.db'}"
        samples, elapsed = asyncio.run(end_to_end(url, args.count, args.rounds))
    for engine in ENGINES:
        print(report(f"execute, no policy ({engine})", samples[f"{engine} none"]))
        print(report(f"execute, 10 policies ({engine})", samples[f"{engine} ten"]))
        for kind in ("", " cpu"):
            for q in (0.5, 0.99):
                ten, none = samples[f"{engine} ten{kind}"], samples[f"{engine} none{kind}"]
                added = (percentile(ten, q) - percentile(none, q)) * 1e6
                print(f"{engine}: added{kind or ' wall'} at p{int(q * 100)}: {added:.1f} us")
        for q in (0.5, 0.99):
            added = [
                (percentile(ten, q) - percentile(none, q)) * 1e6
                for ten, none in zip(ROUNDS[f"{engine} ten"], ROUNDS[f"{engine} none"], strict=True)
            ]
            print(f"{engine}: added wall at p{int(q * 100)}, median of the rounds: {statistics.median(added):.1f} us"
                  f" (rounds: {', '.join(f'{a:.0f}' for a in added)})")  # fmt: skip
        per = {mode: elapsed[f"{engine} {mode}"] / len(samples[f"{engine} {mode}"]) * 1e6 for mode in ("none", "ten")}
        print(f"{engine}: a round's time per execute, flushes included: none {per['none']:.1f} us,"
              f" ten {per['ten']:.1f} us")  # fmt: skip
    print("load average at the end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
