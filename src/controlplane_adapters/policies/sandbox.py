"""The policy engine the server uses: Rego compiled and evaluated in a small pool of policy processes (worker.py),
never in the server's own, each with a time limit per compile and per evaluation, a memory limit, and an
environment of its own that holds no secret (docs/policies.md, "The sandbox").

A module is screened here first (size and nesting: screen.py), then checked in a policy process (the built-ins'
allowlist, then the compiler). An evaluation sends the policies' key (a hash of their ids and modules) and the
input; a process that has not compiled that key yet answers so, and the modules follow. A process that runs out of
time or memory is killed (a crash ends it alike): every policy it was deciding has an error `Outcome` saying why,
which denies the action and goes to the decision log; a new process takes its place, and the others go on
meanwhile.

Memory: rego-cpp's allocator reserves a large address space when it starts, so `RLIMIT_AS` cannot bound a policy
process; this side watches its resident size instead (every `WATCH_SECONDS` while a request is pending), and the
process itself ends after a MemoryError."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

import controlplane_adapters
import controlplane_domain
from controlplane_adapters.policies.screen import MAX_MODULE_BYTES, MAX_NESTING, screen
from controlplane_adapters.policies.worker import MEMORY_EXIT
from controlplane_domain.policies.entity import Outcome, Policy, PolicyCompileError

log = logging.getLogger("controlplane.policies")

WORKER = "controlplane_adapters.policies.worker"
WATCH_SECONDS = 0.01
START_SECONDS = 30.0
"""How long a new policy process may take to say it is ready (an interpreter starting on a busy machine)."""
STOP_SECONDS = 2.0
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder()
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
WALL_FACTOR = 20
"""A call also ends at this many times its limit in wall time, at least `WALL_MINIMUM` (a process that gets no CPU
for that long is as good as hung)."""
WALL_MINIMUM = 5.0


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """The pool's size and each process's limits (settings: CONTROLPLANE_POLICY_*, docs/configuration.md)."""

    processes: int = 2
    evaluation_timeout_ms: int = 250
    compile_timeout_ms: int = 2000
    memory_mb: int = 512
    max_module_bytes: int = MAX_MODULE_BYTES
    max_nesting: int = MAX_NESTING


class Unencodable(ValueError):
    """The request holds a value the frames cannot carry (an integer over 64 bits): nothing was sent."""


class ProcessFailed(Exception):
    """A policy process ran out of time or memory, crashed, or could not be started: `reason` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def minimal_environment() -> dict[str, str]:
    """All a policy process is given: where this code is (the interpreter finds its own packages), and a locale."""
    roots = {str(Path(package.__file__ or ".").resolve().parent.parent) for package in (controlplane_adapters,
             controlplane_domain)}  # fmt: skip
    return {"PYTHONPATH": os.pathsep.join(sorted(roots)), "LANG": "C.UTF-8", "PYTHONNOUSERSITE": "1"}


def _cpu_seconds(pid: int) -> float | None:
    """The process's CPU time so far (user and system), or None where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, ValueError, IndexError):
        return None


def _resident_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


class _Process:
    """One policy process, asked one request at a time."""

    def __init__(self, process: asyncio.subprocess.Process, limits: SandboxLimits) -> None:
        self.process = process
        self.limits = limits
        self.killed_for: str | None = None
        self._call = 0
        """The number of the call pending (odd), or of the last one over (even)."""
        self._stdin = process.stdin
        self._stdout = process.stdout

    @property
    def pid(self) -> int:
        return self.process.pid

    def kill(self, reason: str) -> None:
        if self.killed_for is None:
            self.killed_for = reason
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()

    def _watch(self, call: int, started: float, seconds: float, timed_out: str, first: float | None) -> None:
        """While call number `call` is pending: kill the process once it has spent `seconds` of CPU on it (counted
        from the first look, `first`, plus the wall time before it), past the wall-time backstop, or over the
        memory limit. CPU rather than wall time: on a busy machine a process waiting for a core spends none."""
        if call != self._call:
            return  # that call is over (a later one has its own watch)
        now = time.monotonic()
        cpu = _cpu_seconds(self.pid)
        if cpu is None:  # (no /proc: wall time)
            spent = now - started
        else:
            if first is None:
                first = cpu - (now - started)
            spent = cpu - first
        if spent >= seconds or now - started >= max(WALL_MINIMUM, seconds * WALL_FACTOR):
            self.kill(timed_out)
            return
        resident = _resident_bytes(self.pid)
        if resident is not None and resident > self.limits.memory_mb * 1024 * 1024:
            self.kill(f"policy process went over its memory limit of {self.limits.memory_mb} MiB")
            return
        asyncio.get_running_loop().call_later(
            min(WATCH_SECONDS, max(0.001, seconds - spent)), self._watch, call, started, seconds, timed_out, first
        )

    async def call(self, request: Mapping[str, Any], seconds: float, timed_out: str) -> dict[str, Any]:
        """The answer to `request`, or ProcessFailed (the process is then dead or being killed)."""
        if self.killed_for is not None or self.process.returncode is not None:
            raise ProcessFailed(self.killed_for or "policy process ended")
        assert self._stdin is not None
        assert self._stdout is not None
        try:
            frame = _ENCODER.encode(request)
        except (TypeError, OverflowError, msgspec.EncodeError) as exc:
            raise Unencodable(str(exc)) from None
        self._call += 1
        timer = asyncio.get_running_loop().call_later(
            min(WATCH_SECONDS, seconds), self._watch, self._call, time.monotonic(), seconds, timed_out, None
        )
        try:
            self._stdin.write(len(frame).to_bytes(4, "big") + frame)
            await self._stdin.drain()
            header = await self._stdout.readexactly(4)
            body = await self._stdout.readexactly(int.from_bytes(header, "big"))
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            raise ProcessFailed(await self._why()) from None
        except BaseException:  # cancelled mid-request: its answer would be read by the next one
            self.kill("the request was cancelled")
            raise
        finally:
            self._call += 1
            timer.cancel()
        answer: dict[str, Any] = _DECODER.decode(body)
        return answer

    async def _why(self) -> str:
        if self.killed_for is not None:
            return self.killed_for
        try:
            code = await asyncio.wait_for(self.process.wait(), 1.0)
        except TimeoutError:
            self.kill("policy process stopped answering")
            return "policy process stopped answering"
        if code == MEMORY_EXIT:
            reason = f"policy process went over its memory limit of {self.limits.memory_mb} MiB"
        elif code < 0:
            try:
                reason = f"policy process crashed ({signal.Signals(-code).name})"
            except ValueError:
                reason = f"policy process crashed (signal {-code})"
        else:
            reason = f"policy process exited with status {code}"
        self.killed_for = reason
        return reason

    async def stop(self) -> None:
        if self.process.returncode is None and self._stdin is not None:
            self._stdin.close()  # the process ends at the end of its input
            try:
                await asyncio.wait_for(self.process.wait(), STOP_SECONDS)
                return
            except TimeoutError:
                pass
        self.kill("stopping")
        with contextlib.suppress(ProcessLookupError):
            await self.process.wait()


class SandboxedPolicyEngine:
    """The domain's `PolicyEngine` on a pool of `limits.processes` policy processes, started when first needed
    (and again after one is killed), stopped by `stop()` (the app's shutdown)."""

    def __init__(self, limits: SandboxLimits | None = None) -> None:
        self.limits = limits or SandboxLimits()
        self._idle: asyncio.Queue[_Process | None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._processes: set[_Process] = set()
        self._busy: set[_Process] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = False

    # The pool.

    def pids(self) -> list[int]:
        """The running policy processes' ids (for operations and tests)."""
        return sorted(p.pid for p in self._processes if p.process.returncode is None)

    def busy_pids(self) -> list[int]:
        """The ids of the processes answering a request now."""
        return sorted(p.pid for p in self._busy)

    def _queue(self) -> asyncio.Queue[_Process | None]:
        loop = asyncio.get_running_loop()
        if self._idle is None or self._loop is not loop:
            for process in self._processes:  # (another event loop's: an embedder's second `asyncio.run`)
                process.kill("stopping")
            self._processes.clear()
            self._busy.clear()
            self._loop, self._idle = loop, asyncio.Queue()
            for _ in range(max(1, self.limits.processes)):
                self._idle.put_nowait(None)  # a place for a process, started when first taken
        return self._idle

    async def _spawn(self) -> _Process:
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                WORKER,
                str(self.limits.memory_mb),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=minimal_environment(),
                cwd="/",
                start_new_session=True,  # a terminal's Ctrl-C is the server's to handle, not theirs
            )
        except OSError as exc:
            raise ProcessFailed(f"no policy process could be started: {exc}") from None
        started = _Process(process, self.limits)
        self._processes.add(started)
        try:
            assert process.stdout is not None
            header = await asyncio.wait_for(process.stdout.readexactly(4), START_SECONDS)
            await process.stdout.readexactly(int.from_bytes(header, "big"))
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, OSError):
            started.kill("did not start")
            with contextlib.suppress(ProcessLookupError):
                await process.wait()
            self._processes.discard(started)
            raise ProcessFailed("no policy process could be started") from None
        return started

    async def _acquire(self) -> _Process:
        idle = self._queue()
        process = await idle.get()
        if process is None or process.killed_for is not None or process.process.returncode is not None:
            try:
                process = await self._spawn()
            except BaseException:
                idle.put_nowait(None)
                raise
        self._busy.add(process)
        return process

    def _release(self, process: _Process) -> None:
        self._busy.discard(process)
        if self._idle is not None:
            self._idle.put_nowait(process)

    def _replace(self, process: _Process) -> None:
        """The process is dead or being killed: reap it, and start another in its place meanwhile."""
        self._busy.discard(process)
        log.warning("policy process %d replaced: %s", process.pid, process.killed_for)
        task = asyncio.get_running_loop().create_task(self._replacement(process))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _replacement(self, dead: _Process) -> None:
        dead.kill(dead.killed_for or "replaced")
        with contextlib.suppress(ProcessLookupError):
            await dead.process.wait()
        self._processes.discard(dead)
        if self._idle is None or self._stopped:
            return
        try:
            fresh: _Process | None = await self._spawn()
        except ProcessFailed:
            fresh = None  # the next request tries again
        self._idle.put_nowait(fresh)

    async def ask(
        self, request: Mapping[str, Any], seconds: float, timed_out: str, load: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The answer of an idle process; when it answers that it does not know the key, `load` (the modules) is
        sent first (with the compile time limit), then `request` again. ProcessFailed when the process failed (it
        is replaced)."""
        process = await self._acquire()
        try:
            answer = await process.call(request, seconds, timed_out)
            if load is not None and answer.get("unknown"):
                loaded = await process.call(
                    load,
                    self.limits.compile_timeout_ms / 1000,
                    f"compiling the policies timed out after {self.limits.compile_timeout_ms} ms",
                )
                answer = loaded if "ok" not in loaded else await process.call(request, seconds, timed_out)
        except Unencodable:
            self._release(process)
            raise
        except BaseException:  # ProcessFailed, or cancelled mid-request
            self._replace(process)
            raise
        self._release(process)
        return answer

    async def stop(self) -> None:
        """Stop every policy process (the app's shutdown); a later use starts them again."""
        self._stopped = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(*(process.stop() for process in list(self._processes)), return_exceptions=True)
        self._processes.clear()
        self._busy.clear()
        self._idle = None
        self._loop = None
        self._stopped = False

    # The port.

    async def check(self, rego: str) -> None:
        screen(rego, max_bytes=self.limits.max_module_bytes, max_nesting=self.limits.max_nesting)
        try:
            answer = await self.ask(
                {"op": "check", "rego": rego},
                self.limits.compile_timeout_ms / 1000,
                f"compiling the module timed out after {self.limits.compile_timeout_ms} ms",
            )
        except ProcessFailed as failed:
            raise PolicyCompileError(failed.reason) from None
        if "error" in answer:
            error = answer["error"]
            raise PolicyCompileError(error["message"], error.get("line"), error.get("column"))
        if "failed" in answer:
            raise PolicyCompileError(f"the module could not be checked: {answer['failed']}")

    def prepare(self, policies: Sequence[Policy]) -> SandboxedPolicies:
        return SandboxedPolicies(self, [(policy.id, policy.rego) for policy in policies])


class SandboxedPolicies:
    """`PreparedPolicies` decided by the engine's policy processes (compiled there on first use)."""

    def __init__(self, engine: SandboxedPolicyEngine, modules: list[tuple[str, str]]) -> None:
        self._engine = engine
        self._ids = [policy_id for policy_id, _ in modules]
        self._broken: dict[int, str] = {}
        limits = engine.limits
        for index, (_, rego) in enumerate(modules):  # stored before these limits: they fail (closed)
            try:
                screen(rego, max_bytes=limits.max_module_bytes, max_nesting=limits.max_nesting)
            except PolicyCompileError as exc:
                self._broken[index] = f"the module does not compile: {exc.message}"
        self._sent = [(str(i), rego) for i, (_, rego) in enumerate(modules) if i not in self._broken]
        self._key = hashlib.sha256(_ENCODER.encode(self._sent)).hexdigest()
        self._timed_out = f"policy evaluation timed out after {limits.evaluation_timeout_ms} ms"

    def _all_failed(self, reason: str) -> list[Outcome]:
        return [Outcome(policy_id, error=self._broken.get(index, reason)) for index, policy_id in enumerate(self._ids)]

    async def evaluate(self, document: Mapping[str, Any]) -> list[Outcome]:
        if not self._sent:
            return self._all_failed("the module does not compile")
        request = {"op": "evaluate", "key": self._key, "input": document}
        try:
            answer = await self._engine.ask(
                request,
                self._engine.limits.evaluation_timeout_ms / 1000,
                self._timed_out,
                load={"op": "load", "key": self._key, "modules": self._sent},
            )
        except ProcessFailed as failed:
            return self._all_failed(failed.reason)
        except Unencodable as exc:
            return self._all_failed(f"the input cannot be evaluated: {exc}")
        if "outcomes" not in answer:
            return self._all_failed(str(answer.get("failed") or "policy process gave no answer"))
        answered = iter(answer["outcomes"])
        outcomes = []
        for index, policy_id in enumerate(self._ids):
            if index in self._broken:
                outcomes.append(Outcome(policy_id, error=self._broken[index]))
            else:
                deny, error = next(answered)
                outcomes.append(Outcome(policy_id, tuple(deny), error))
        return outcomes
