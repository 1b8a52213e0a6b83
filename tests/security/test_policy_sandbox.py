"""Policies run sandboxed (issue #31): Rego is compiled and evaluated in policy processes with time and memory
limits and no secret in their environment; modules are refused for their size, their nesting and the built-ins
they name; a process that fails denies (and the decision log says why), is replaced, and leaves the server, the
other requests and the other organizations alone."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.policies.built_ins import ALLOWED
from controlplane_adapters.policies.limits import SandboxLimits
from controlplane_adapters.policies.sandbox import SandboxedPolicyEngine
from controlplane_adapters.policies.screen import references, screen
from controlplane_adapters.settings.policies import PolicySettings
from controlplane_adapters.settings.policies_env import policy_settings
from controlplane_adapters.settings.storage import StorageSettings
from controlplane_domain.policies.entity import Action, Enforcement, Policy, PolicyCompileError
from controlplane_http.bootstrap import build_app
from tests.conftest import app_settings
from tests.http.test_agents import create_agent
from tests.http.test_executions import setup_queue
from tests.support import SERVICE_KEY, bearer, make_jwt, wait_until

ALLOW_ALL = 'package fine\nimport rego.v1\n\ndeny contains "no robots" if input.resource.type == "robot"\n'
SPIN = """package spin
import rego.v1

deny contains "never" if {
    input.request.prompt == "spin"
    some i in numbers.range(1, 100000)
    some j in numbers.range(1, 100000)
    i * j == -1
}
"""
HOG = """package hog
import rego.v1

deny contains "never" if {
    input.request.prompt == "hog"
    count([x | some x in numbers.range(1, 80000000)]) == -1
}
"""
OTHER_ORG = "org-sandbox-other"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@contextmanager
def sandboxed(tmp_path: Path, **limits: int) -> Iterator[tuple[TestClient[Any], SandboxedPolicyEngine]]:
    """An app (memory store) whose policy processes have these limits, and its engine; stopped on leaving."""
    base = app_settings("memory://", storage=StorageSettings(directory=str(tmp_path / "storage"), durable=False))
    app = build_app(replace(base, policies=PolicySettings(**limits)), clock=ManualClock())
    engine = cast(SandboxedPolicyEngine, app.state["ports"].policies.engine)
    with TestClient(app) as client:
        client.headers.update(bearer(SERVICE_KEY))
        yield client, engine
    for pid in engine.pids():  # the app's shutdown stopped them
        pytest.fail(f"policy process {pid} still runs")


def create(client: TestClient[Any], name: str, rego: str, **fields: Any) -> dict[str, Any]:
    response = client.post("/api/v1/policies", json={"name": name, "rego": rego, "actions": ["execute"], **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def refused(client: TestClient[Any], rego: str, **headers: str) -> dict[str, Any]:
    response = client.post(
        "/api/v1/policies", json={"name": "hostile", "rego": rego, "actions": ["execute"]}, headers=headers
    )
    assert response.status_code == 422, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


def dry_run(client: TestClient[Any], prompt: str, **headers: str) -> dict[str, Any]:
    body = {"action": "execute", "resource": {"type": "agent", "id": None}, "request": {"prompt": prompt}}
    response = client.post("/api/v1/policies/evaluate", json=body, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def other_admin() -> dict[str, str]:
    return bearer(make_jwt(OTHER_ORG, sub="olga", roles=["admin"]))


def policy(rego: str, index: int = 0) -> Policy:
    return Policy(id=f"p{index}", organization_id="o", name=f"p{index}", description=None, rego=rego,
                  enabled=True, enforcement=Enforcement.ENFORCE, actions=(Action.EXECUTE,), created_at=NOW,
                  updated_at=NOW)  # fmt: skip


# Outside the server's process, with nothing of its environment.


def test_policies_are_evaluated_in_policy_processes_without_the_servers_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVICE_JWT_SECRET", "the-server-secret")
    secret_file = tmp_path / "server-secret"
    secret_file.write_text("the-server-secret")
    with secret_file.open() as held, sandboxed(tmp_path) as (client, engine):
        os.set_inheritable(held.fileno(), True)  # (a file a library opened without O_CLOEXEC)
        create(client, "fine", ALLOW_ALL)
        assert dry_run(client, "hello")["allowed"] is True
        pids = engine.pids()
        assert pids
        assert os.getpid() not in pids
        for pid in pids:
            environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            names = {entry.split(b"=", 1)[0].decode() for entry in environment if entry}
            assert names <= {"PYTHONPATH", "LANG", "PYTHONNOUSERSITE"}, names
            assert b"the-server-secret" not in Path(f"/proc/{pid}/environ").read_bytes()
            files = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
            stderr = os.readlink("/proc/self/fd/2")
            assert {f for f in files if not f.startswith("socket:")} <= {"/dev/null", stderr}, files


# The allowlist.

FORBIDDEN = [
    ("deny contains v if { v := opa.runtime().env.SERVICE_JWT_SECRET }", "opa.runtime"),
    ('deny contains v if { v := opa["runtime"]().env.SERVICE_JWT_SECRET }', "opa.runtime"),
    ("deny contains v if { v := opa[`runtime`]().env.X }", "opa.runtime"),
    ("deny contains v if { v := opa . runtime().env.X }", "opa.runtime"),
    ("deny contains v if { v := opa # a comment\n.runtime().env.X }", "opa.runtime"),
    ('deny contains v if { v := http.send({"method": "get", "url": "http://169.254.169.254"}) }', "http.send"),
    ('deny contains v if { v := net.lookup_ip_addr("example.com") }', "net.lookup_ip_addr"),
    ('deny contains "x" if { print("hello") }', "print"),
    ('deny contains "x" if { trace("hello") }', "trace"),
    ('deny contains "x" if { rand.intn("a", 10) > 3 }', "rand.intn"),
]


@pytest.mark.parametrize(("rule", "named"), FORBIDDEN)
def test_a_built_in_outside_the_allowlist_is_refused_with_its_name_and_line(
    tmp_path: Path, rule: str, named: str
) -> None:
    with sandboxed(tmp_path) as (client, _):
        error = refused(client, f"package hostile\nimport rego.v1\n\n{rule}\n")
        assert f"`{named}`" in error["message"], error
        assert error["details"]["line"] == 4, error


def test_an_import_of_a_forbidden_built_in_is_refused(tmp_path: Path) -> None:
    with sandboxed(tmp_path) as (client, _):
        rego = "package hostile\nimport rego.v1\nimport opa.runtime as r\n\ndeny contains v if { v := r().env.X }\n"
        error = refused(client, rego)
        assert "`opa.runtime`" in error["message"]
        assert error["details"]["line"] == 3


FORBIDDEN_USES = [
    ('deny contains v if { x := "runtime"; v := opa[x]().env.X }', "opa[…]"),
    ("deny contains v if { v := input.a[opa.runtime()] }", "opa.runtime"),
    ("deny contains v if { v := data.hostile.y with count as opa.runtime }\ny := count([1])", "opa.runtime"),
    ("deny contains v if { v := data.hostile.y with opa.runtime as count }\ny := 1", "opa.runtime"),
]


@pytest.mark.parametrize(("rule", "named"), FORBIDDEN_USES)
def test_a_forbidden_built_in_is_refused_wherever_it_is_called_or_put_in_a_built_ins_place(
    tmp_path: Path, rule: str, named: str
) -> None:
    with sandboxed(tmp_path) as (client, _):
        error = refused(client, f"package hostile\nimport rego.v1\n\n{rule}\n")
        assert f"`{named}`" in error["message"], error
        assert error["details"]["line"] == 4, error


LOCAL_VARIABLES = [
    'deny contains "x" if { net := input.request.n; x := net; x > 1 }',
    "deny contains v if { some opa in input.request.items; v := opa.name }",
    "deny contains v if { opa := input.request.items; v := opa[0].name }",
    'deny contains v if { some http in input.request.items; http.send == "yes"; v := "send" }',
    'deny contains v if { trace := input.request.n; v := sprintf("%v", [trace]) }',
    "deny contains v if { net := 1; v := data.locals.y with input.request.n as net }\ny := input.request.n",
]


def test_a_variable_named_like_a_forbidden_built_in_is_no_built_in(tmp_path: Path) -> None:
    with sandboxed(tmp_path) as (client, _):
        for index, rule in enumerate(LOCAL_VARIABLES):
            create(client, f"locals-{index}", f"package locals\nimport rego.v1\n\n{rule}\n")
        body = {"action": "execute", "resource": {"type": "agent", "id": None},
                "request": {"n": 2, "items": [{"name": "seen", "send": "yes"}]}}  # fmt: skip
        response = client.post("/api/v1/policies/evaluate", json=body)
        assert response.status_code == 200, response.text
        decided = {d["policy_name"]: (d["deny"], d["error"]) for d in response.json()["decisions"]}
        assert decided == {
            "locals-0": (["x"], None),
            "locals-1": (["seen"], None),
            "locals-2": (["seen"], None),
            "locals-3": (["send"], None),
            "locals-4": (["2"], None),
            "locals-5": (["1"], None),
        }, decided


def test_the_allowlist_lets_the_usual_built_ins_through_and_strings_are_not_code() -> None:
    source = (
        'package p\n# opa.runtime() in a comment\nx := sprintf("%s", ["http.send(1)"])\ny := time.clock([1, "UTC"])\n'
    )
    names = {name for name, _, _ in references(source)}
    assert {"sprintf", "time.clock"} <= names
    assert not any(name.startswith(("opa", "http")) for name in names)
    assert {"count", "time.clock", "regex.match", "sprintf"} <= ALLOWED


def test_a_module_stored_before_the_allowlist_fails_closed_when_evaluated() -> None:
    async def scenario() -> list[Any]:
        engine = SandboxedPolicyEngine()
        try:
            hostile = "package h\nimport rego.v1\n\ndeny contains v if { v := opa.runtime().env.HOME }\n"
            return await engine.prepare([policy(hostile), policy(ALLOW_ALL, 1)]).evaluate({"resource": {"type": "a"}})
        finally:
            await engine.stop()

    hostile, fine = asyncio.run(scenario())
    assert hostile.error is not None
    assert "opa.runtime" in hostile.error
    assert fine.allowed


# Size and nesting, before any compiler.


def test_a_module_over_64_kib_is_refused(tmp_path: Path) -> None:
    padding = "# " + "é" * 40_000 + "\n"  # 40 002 characters, 80 003 bytes
    with sandboxed(tmp_path) as (client, _):
        error = refused(client, f'package big\nimport rego.v1\n{padding}deny contains "x" if false\n')
        assert "over the limit of 65536" in error["message"]


def test_a_module_nested_deeper_than_32_is_refused_with_its_line(tmp_path: Path) -> None:
    deep = "[" * 33 + "]" * 33
    within = "[" * 32 + "]" * 32
    with sandboxed(tmp_path) as (client, _):
        error = refused(client, f'package deep\nimport rego.v1\n\nx := {deep}\ndeny contains "x" if false\n')
        assert "deeper than 32" in error["message"]
        assert (error["details"]["line"], error["details"]["column"]) == (4, 6 + 32)
        create(client, "within", f'package deep\nimport rego.v1\n\nx := {within}\ndeny contains "x" if false\n')
        create(client, "strings", 'package s\nimport rego.v1\n\n# ((((\ndeny contains "[[[[" if false\n')


def test_twenty_thousand_brackets_are_refused_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(PolicyCompileError, match="deeper than 32"):
        screen("package p\nx := " + "[" * 20_000 + "]" * 20_000 + "\n")
    assert time.monotonic() - started < 5  # (the compiler took tens of seconds, then crashed)


# Time, memory, crash: denied, logged, replaced; the others go on.


def test_an_evaluation_past_its_time_limit_denies_is_logged_and_its_process_replaced(tmp_path: Path) -> None:
    with sandboxed(tmp_path) as (client, engine):
        _, queue = setup_queue(client)
        agent = create_agent(client)["id"]
        spin = create(client, "spin", SPIN)
        denied = client.post(f"/api/v1/agents/{agent}/execute", json={"prompt": "spin", "worker_queue_id": queue})
        assert denied.status_code == 403, denied.text
        (message,) = denied.json()["error"]["details"]["messages"]
        assert "policy evaluation timed out after 250 ms" in message
        wait_until(lambda: bool(client.get("/api/v1/policy-decisions", params={"policy_id": spin["id"]}).json()))
        (logged,) = client.get("/api/v1/policy-decisions", params={"policy_id": spin["id"]}).json()["items"]
        assert logged["allowed"] is False
        assert "timed out after 250 ms" in logged["error"]
        allowed = client.post(f"/api/v1/agents/{agent}/execute", json={"prompt": "hi", "worker_queue_id": queue})
        assert allowed.status_code == 201, allowed.text  # a new process took the killed one's place
        wait_until(lambda: len(engine.pids()) >= 1)


def test_a_crashed_policy_process_denies_and_is_replaced() -> None:
    async def scenario() -> tuple[Any, Any, list[int]]:
        engine = SandboxedPolicyEngine(SandboxLimits(evaluation_timeout_ms=60_000))
        try:
            prepared = engine.prepare([policy(SPIN)])
            assert (await prepared.evaluate({"request": {"prompt": "warm"}}))[0].allowed
            pending = asyncio.ensure_future(prepared.evaluate({"request": {"prompt": "spin"}}))
            for _ in range(3000):  # polled (the engine has no event for it), up to 30 s
                if engine.busy_pids():
                    break
                await asyncio.sleep(0.01)
            (victim,) = engine.busy_pids()
            os.kill(victim, signal.SIGSEGV)
            (crashed,) = await pending
            (after,) = await prepared.evaluate({"request": {"prompt": "fine"}})
            return crashed, after, [victim, *engine.pids()]
        finally:
            await engine.stop()

    crashed, after, (victim, *alive) = asyncio.run(scenario())
    assert crashed.error == "policy process crashed (SIGSEGV)"
    assert after.allowed
    assert victim not in alive


def test_an_evaluation_over_the_memory_limit_denies_and_is_replaced() -> None:
    async def scenario() -> tuple[Any, Any]:
        engine = SandboxedPolicyEngine(SandboxLimits(evaluation_timeout_ms=120_000, memory_mb=200))
        try:
            prepared = engine.prepare([policy(HOG)])
            (hog,) = await prepared.evaluate({"request": {"prompt": "hog"}})
            (after,) = await prepared.evaluate({"request": {"prompt": "fine"}})
            return hog, after
        finally:
            await engine.stop()

    hog, after = asyncio.run(scenario())
    assert hog.error == "policy process went over its memory limit of 200 MiB"
    assert after.allowed


def test_a_module_too_slow_to_check_is_refused(tmp_path: Path) -> None:
    slow = "package slow\nimport rego.v1\n\nn := count([x | some x in numbers.range(1, 80000000)])\n"
    with sandboxed(tmp_path, compile_timeout_ms=300) as (client, _):
        error = refused(client, f'{slow}deny contains "big" if n < 0\n')
        assert "compiling the module timed out after 300 ms" in error["message"]
        create(client, "fine", ALLOW_ALL)


def test_health_and_other_organizations_answer_during_a_pathological_evaluation(tmp_path: Path) -> None:
    with sandboxed(tmp_path, evaluation_timeout_ms=30_000) as (client, engine):
        create(client, "spin", SPIN)
        other = other_admin()
        response = client.post(
            "/api/v1/policies", json={"name": "fine", "rego": ALLOW_ALL, "actions": ["execute"]}, headers=other
        )
        assert response.status_code == 201, response.text
        assert dry_run(client, "warm")["allowed"] is True  # both organizations' policies compiled
        results: list[dict[str, Any]] = []
        spinning = threading.Thread(target=lambda: results.append(dry_run(client, "spin")))
        spinning.start()
        try:
            wait_until(lambda: len(engine.busy_pids()) == 1)
            started = time.monotonic()
            health = client.get("/api/health")
            answered_in = time.monotonic() - started
            assert health.status_code == 200, health.text
            assert dry_run(client, "hello", **other)["allowed"] is True  # on the other process
            assert spinning.is_alive()  # all of it while the evaluation still runs
            assert not results
            assert answered_in < 5.0  # (generous: a busy machine; the event loop is never blocked)
        finally:
            for pid in engine.busy_pids():
                os.kill(pid, signal.SIGKILL)
            spinning.join(30)
        (spun,) = results
        assert spun["allowed"] is False
        assert "policy process crashed (SIGKILL)" in spun["decisions"][0]["error"]


# Hostile modules, generated: the server stays up, and answers the others.

HOSTILE_BUILT_INS = ["opa.runtime()", 'opa["runtime"]()', 'http.send({"url": "x"})', 'net.lookup_ip_addr("a")',
                     'print("x")', 'trace("x")']  # fmt: skip


@st.composite
def hostile_modules(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(["deep", "huge", "slow", "forbidden"]))
    head = "package hostile\nimport rego.v1\n\n"
    if kind == "deep":
        depth = draw(st.integers(min_value=33, max_value=30_000))
        opening = draw(st.sampled_from(["[", "{", "("]))
        closing = {"[": "]", "{": "}", "(": ")"}[opening]
        return kind, f'{head}x := {opening * depth}1{closing * depth}\ndeny contains "x" if false\n'
    if kind == "huge":
        size = draw(st.integers(min_value=65_537, max_value=200_000))
        line = draw(st.sampled_from(["# padding\n", "y := 1\n", 's := "aaaaaaaaaaaaaaaa"\n']))
        return kind, head + line * (size // len(line) + 1) + 'deny contains "x" if false\n'
    if kind == "slow":
        upper = draw(st.integers(min_value=10_000, max_value=10_000_000))
        return kind, (
            f'{head}deny contains "x" if {{\n    input.request.prompt == "spin"\n'
            f"    some i in numbers.range(1, {upper})\n    some j in numbers.range(1, {upper})\n    i * j == -1\n}}\n"
        )
    call = draw(st.sampled_from(HOSTILE_BUILT_INS))
    return kind, f"{head}deny contains v if {{ v := {call} }}\n"


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hostile=hostile_modules())
def test_hostile_modules_never_take_the_server_or_the_others_down(tmp_path: Path, hostile: tuple[str, str]) -> None:
    kind, rego = hostile
    with sandboxed(tmp_path, evaluation_timeout_ms=200, compile_timeout_ms=1000) as (client, engine):
        other = other_admin()
        response = client.post(
            "/api/v1/policies", json={"name": "fine", "rego": ALLOW_ALL, "actions": ["execute"]}, headers=other
        )
        assert response.status_code == 201, response.text
        saved = client.post("/api/v1/policies", json={"name": "hostile", "rego": rego, "actions": ["execute"]})
        if kind == "slow":
            assert saved.status_code == 201, saved.text
            outcome = dry_run(client, "spin")
            assert outcome["allowed"] is False
            assert "timed out" in outcome["decisions"][0]["error"]
        else:
            assert saved.status_code == 422, saved.text
        # Stored anyway (as before these limits), the module fails closed, and the engine goes on.
        prepared = engine.prepare([policy(rego)])
        (stored,) = client.blocking_portal.call(prepared.evaluate, {"request": {"prompt": "spin"}})
        assert stored.error is not None
        assert client.get("/api/health").status_code == 200
        assert dry_run(client, "hello", **other)["allowed"] is True
        assert dry_run(client, "hello")["allowed"] is True


def test_the_settings_read_the_environment() -> None:
    loaded = policy_settings(
        {
            "CONTROLPLANE_POLICY_PROCESSES": "3",
            "CONTROLPLANE_POLICY_EVALUATION_TIMEOUT_MS": "100",
            "CONTROLPLANE_POLICY_COMPILE_TIMEOUT_MS": "1500",
            "CONTROLPLANE_POLICY_MEMORY_MB": "256",
        }
    )
    assert loaded == PolicySettings(processes=3, evaluation_timeout_ms=100, compile_timeout_ms=1500, memory_mb=256)


def test_a_stopped_engine_starts_its_processes_again_when_used() -> None:
    async def scenario() -> tuple[list[int], list[int], Any]:
        engine = SandboxedPolicyEngine()
        try:
            prepared = engine.prepare([policy(ALLOW_ALL)])
            await prepared.evaluate({"resource": {"type": "agent"}})
            before = engine.pids()
            await engine.stop()
            stopped = engine.pids()
            (again,) = await prepared.evaluate({"resource": {"type": "robot"}})
            return before, stopped, again
        finally:
            await engine.stop()

    before, stopped, again = asyncio.run(scenario())
    assert before
    assert stopped == []
    assert again.deny == ("no robots",)


def test_a_policy_process_forgets_bundles_rather_than_outgrow_its_memory_limit() -> None:
    modules = [f'package m{i}\nimport rego.v1\n\ndeny contains "{"x" * 200}" if input.n == {i}\n' for i in range(10)]

    async def scenario() -> list[Any]:
        engine = SandboxedPolicyEngine(SandboxLimits(processes=1, memory_mb=128))
        try:
            outcomes = []
            for organization in range(80):  # some 2 MB each, 160 MB kept: over the limit, were they all kept
                renamed = [module.replace("input.n ==", f"input.n + {organization} ==") for module in modules]
                prepared = engine.prepare([policy(rego, index) for index, rego in enumerate(renamed)])
                outcomes += await prepared.evaluate({"n": -1000})
            return outcomes
        finally:
            await engine.stop()

    outcomes = asyncio.run(scenario())
    assert len(outcomes) == 800
    assert [outcome for outcome in outcomes if not outcome.allowed] == []


def test_one_request_at_a_time_keeps_to_one_policy_process() -> None:
    """The most recently used idle process is taken (one that has the policies compiled first): its bundles and
    caches stay hot, and a second process starts only for a second request at once."""

    async def scenario() -> tuple[list[int], list[int], list[Any]]:
        engine = SandboxedPolicyEngine(SandboxLimits(processes=2))
        try:
            first, second = engine.prepare([policy(ALLOW_ALL)]), engine.prepare([policy(ALLOW_ALL, 1)])
            outcomes = []
            for index in range(20):
                outcomes += await (first if index % 2 else second).evaluate({"resource": {"type": "robot"}})
            serial = engine.pids()
            both = await asyncio.gather(*(first.evaluate({"request": {"prompt": "spin"}}) for _ in range(2)))
            return serial, engine.pids(), outcomes + [outcome for pair in both for outcome in pair]
        finally:
            await engine.stop()

    serial, concurrent, outcomes = asyncio.run(scenario())
    assert len(serial) == 1
    assert len(concurrent) == 2
    assert [outcome.deny for outcome in outcomes[:20]] == [("no robots",)] * 20
    assert all(outcome.allowed for outcome in outcomes[20:])


def test_a_built_in_error_fails_its_policy_with_the_error_and_the_process_lives() -> None:
    """rego-cpp throws for a time zone it does not know; in a process that loaded greenlet's libstdc++ first (the
    server's) that crashes the process: the policy process loads no such extension, and says why."""
    zone = (
        'package z\nimport rego.v1\n\ndeny contains "x" if {\n'
        '    [h, _, _] := time.clock([input.time, "Nowhere/Zone"])\n    h > 1\n}\n'
    )

    async def scenario() -> tuple[Any, Any, list[int], list[int]]:
        engine = SandboxedPolicyEngine(SandboxLimits(processes=1))
        try:
            (failed, fine) = await engine.prepare([policy(zone), policy(ALLOW_ALL, 1)]).evaluate({"time": 0})
            before = engine.pids()
            await engine.prepare([policy(ALLOW_ALL)]).evaluate({})
            return failed, fine, before, engine.pids()
        finally:
            await engine.stop()

    failed, fine, before, after = asyncio.run(scenario())
    assert failed.error == "std::chrono::tzdb: cannot locate zone: Nowhere/Zone"
    assert fine.allowed
    assert before == after  # the same process


def test_policies_larger_than_the_sockets_buffer_are_sent_whole() -> None:
    """Twelve modules of some 50 KiB each: the frame that loads them is larger than the socket takes at once."""
    padding = "# " + "x" * 50_000 + "\n"
    modules = [f'package big{i}\nimport rego.v1\n{padding}deny contains "n{i}" if input.n == {i}\n' for i in range(12)]

    async def scenario() -> list[Any]:
        engine = SandboxedPolicyEngine(SandboxLimits(processes=1))
        try:
            prepared = engine.prepare([policy(rego, index) for index, rego in enumerate(modules)])
            return await prepared.evaluate({"n": 7})
        finally:
            await engine.stop()

    outcomes = asyncio.run(scenario())
    assert [(outcome.deny, outcome.error) for outcome in outcomes] == [
        (("n7",) if i == 7 else (), None) for i in range(12)
    ]
