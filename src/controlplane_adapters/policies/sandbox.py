"""The policy engine the server uses: Rego compiled and evaluated in a small pool of policy processes (worker.py),
never in the server's own, each with a time limit per compile and per evaluation, a memory limit, and an
environment of its own that holds no secret (docs/policies.md, "The sandbox").

A module is screened here first (size and nesting: screen.py), then checked in a policy process (the built-ins'
allowlist, then the compiler). An evaluation is one round trip: the policies' key (a hash of their ids and modules)
and the input in one frame, their outcomes in one answer. The modules go first, once, to a process that has not
compiled that key (the server remembers which keys it sent where, and an idle process that holds the key is taken
first, the most recently used otherwise, so that bundles stay hot in one process under a light load).

The limits are the policy process's own (process.py). One watchdog for the whole pool, armed while a call is
pending, kills a process past its wall-time backstop (one that gets no CPU, or is stopped). Every policy a failed
process was deciding has an error `Outcome` saying why, which denies the action and goes to the decision log; a
new process takes its place, and the others go on meanwhile."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from controlplane_adapters.policies.limits import (
    WATCHDOG_SECONDS,
    WORKER,
    ProcessFailed,
    SandboxLimits,
    Unencodable,
    minimal_environment,
)
from controlplane_adapters.policies.prepared import SandboxedPolicies
from controlplane_adapters.policies.process import PolicyProcess
from controlplane_adapters.policies.screen import screen
from controlplane_domain.policies.entity import Policy, PolicyCompileError

log = logging.getLogger("controlplane.policies")


class SandboxedPolicyEngine:
    """The domain's `PolicyEngine` on a pool of `limits.processes` policy processes, started when first needed
    (and again after one is killed), stopped by `stop()` (the app's shutdown)."""

    def __init__(self, limits: SandboxLimits | None = None) -> None:
        self.limits = limits or SandboxLimits()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._processes: set[PolicyProcess] = set()
        self._idle: list[PolicyProcess] = []
        """Idle processes, the most recently used last."""
        self._vacant = 0
        """Places in the pool with no process (one is started when a request takes the place)."""
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._tasks: set[asyncio.Task[None]] = set()
        self._watchdog: asyncio.TimerHandle | None = None
        self._stopped = False

    # The pool.

    def pids(self) -> list[int]:
        """The running policy processes' ids (for operations and tests)."""
        return sorted(p.pid for p in self._processes if not p.ended.done())

    def busy_pids(self) -> list[int]:
        """The ids of the processes answering a request now."""
        return sorted(p.pid for p in self._processes if p.busy and not p.ended.done())

    def _bind(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            for process in self._processes:  # (another event loop's: an embedder's second `asyncio.run`)
                process.abandon()
            self._processes.clear()
            self._idle.clear()
            self._waiting.clear()
            self._watchdog = None
            self._loop, self._vacant = loop, max(1, self.limits.processes)
        return loop

    def _start(self, theirs: socket.socket) -> tuple[int, int]:
        """A new policy process on `theirs` (its fd 0 and 1), in a session of its own: its id and a pidfd (it does
        not wait: posix_spawn returns once the process exists)."""
        argv = [sys.executable, "-P", "-m", WORKER, str(self.limits.memory_mb),
                str(self.limits.evaluation_timeout_ms), str(self.limits.compile_timeout_ms)]  # fmt: skip
        pid = os.posix_spawn(
            sys.executable,
            argv,
            minimal_environment(),
            file_actions=[(os.POSIX_SPAWN_DUP2, theirs.fileno(), 0), (os.POSIX_SPAWN_DUP2, theirs.fileno(), 1)],
            setsid=True,  # a terminal's Ctrl-C is the server's to handle, not theirs
        )
        try:
            return pid, os.pidfd_open(pid)
        except OSError:  # (Linux before 5.3: no pidfd)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise

    async def _spawn(self) -> PolicyProcess:
        loop = self._bind()
        ours, theirs = socket.socketpair()
        try:
            pid, pidfd = self._start(theirs)
        except OSError as exc:
            ours.close()
            raise ProcessFailed(f"no policy process could be started: {exc}") from None
        finally:
            theirs.close()
        ours.setblocking(False)
        process = PolicyProcess(pid, pidfd, ours, self.limits, loop)
        self._processes.add(process)
        try:
            await process.started()
        except BaseException:
            self._processes.discard(process)
            process.kill("did not start")
            raise
        return process

    async def _acquire(self, key: str | None) -> PolicyProcess:
        self._bind()
        while True:
            idle = self._idle
            while idle:
                chosen = len(idle) - 1
                if key is not None:
                    for index in range(chosen, -1, -1):
                        if key in idle[index].keys:
                            chosen = index
                            break
                process = idle.pop(chosen)
                if process.alive:
                    return process
                self._vacant += 1  # (died while idle: its place is free)
            if self._vacant:
                self._vacant -= 1
                try:
                    return await self._spawn()
                except BaseException:
                    self._vacant += 1
                    self._wake()
                    raise
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._wake()  # (woken, then cancelled: the next one goes)
                else:
                    with contextlib.suppress(ValueError):
                        self._waiting.remove(waiter)
                raise

    def _wake(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _release(self, process: PolicyProcess) -> None:
        self._idle.append(process)
        self._wake()

    def _replace(self, process: PolicyProcess) -> None:
        """The process is dead or being killed: reap it, and start another in its place meanwhile."""
        log.warning("policy process %d replaced: %s", process.pid, process.killed_for)
        task = asyncio.get_running_loop().create_task(self._replacement(process))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _replacement(self, dead: PolicyProcess) -> None:
        dead.kill(dead.killed_for or "replaced")
        await dead.ended
        self._processes.discard(dead)
        if self._loop is None or self._stopped:
            return
        try:
            fresh = await self._spawn()
        except ProcessFailed:
            self._vacant += 1  # the next request tries again
            self._wake()
            return
        self._release(fresh)

    def _arm(self) -> None:
        if self._watchdog is None and self._loop is not None:
            self._watchdog = self._loop.call_later(WATCHDOG_SECONDS, self._watch)

    def _watch(self) -> None:
        """Kill the processes whose call is past its wall-time backstop; again in a while if any call is pending."""
        self._watchdog = None
        now = time.monotonic()
        pending = False
        for process in self._processes:
            if process.busy:
                pending = True
                if now >= process.deadline:
                    process.kill(self.limits.timed_out(process.op))
        if pending:
            self._arm()

    async def ask(self, request: Mapping[str, Any], load: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The answer of an idle process (one that holds `load`'s key if any does). With `load` (the modules of
        the key `request` evaluates), the process is sent them first unless it was already: once more if it
        answers that it does not know the key. ProcessFailed when the process failed (it is replaced)."""
        key = None if load is None else load["key"]
        process = await self._acquire(key)
        self._arm()
        try:
            if key is not None and key not in process.keys:
                answer = await process.call(load or {})
                if "ok" not in answer:
                    self._release(process)
                    return answer
                process.remember(key)
            answer = await process.call(request)
            if key is not None and answer.get("unknown"):  # forgotten there since (its memory or its count)
                process.keys.pop(key, None)
                loaded = await process.call(load or {})
                answer = loaded if "ok" not in loaded else await process.call(request)
                if "ok" in loaded:
                    process.remember(key)
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
        if self._watchdog is not None:
            self._watchdog.cancel()
        self._watchdog = None
        self._processes.clear()
        self._idle.clear()
        for waiter in self._waiting:
            if not waiter.done():
                waiter.cancel()
        self._waiting.clear()
        self._loop = None
        self._stopped = False

    # The port.

    async def check(self, rego: str) -> None:
        screen(rego, max_bytes=self.limits.max_module_bytes, max_nesting=self.limits.max_nesting)
        try:
            answer = await self.ask({"op": "check", "rego": rego})
        except ProcessFailed as failed:
            raise PolicyCompileError(failed.reason) from None
        if "error" in answer:
            error = answer["error"]
            raise PolicyCompileError(error["message"], error.get("line"), error.get("column"))
        if "failed" in answer:
            raise PolicyCompileError(f"the module could not be checked: {answer['failed']}")

    def prepare(self, policies: Sequence[Policy]) -> SandboxedPolicies:
        return SandboxedPolicies(self, [(policy.id, policy.rego) for policy in policies])
