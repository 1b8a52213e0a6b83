"""The policy engine the server uses: Rego compiled and evaluated in a small pool of policy processes (worker.py),
never in the server's own, each with a time limit per compile and per evaluation, a memory limit, and an
environment of its own that holds no secret (docs/policies.md, "The sandbox").

A module is screened here first (size and nesting: screen.py), then checked in a policy process (the built-ins'
allowlist, then the compiler). An evaluation is one round trip: the policies' key (a hash of their ids and modules)
and the input in one frame, their outcomes in one answer. The modules go first, once, to a process that has not
compiled that key (the server remembers which keys it sent where, and an idle process that holds the key is taken
first, the most recently used otherwise, so that bundles stay hot in one process under a light load).

The limits are the policy process's own (worker.py: `ITIMER_PROF` for its CPU time on a request, `RLIMIT_DATA` for
its memory), so a call here arms no timer and reads no /proc: the process ends past a limit, and how it ended
(`wait4`: the signal, the status, its peak resident size) says why. One watchdog for the whole pool, armed while a
call is pending, kills a process past its wall-time backstop (one that gets no CPU, or is stopped). Every policy a
failed process was deciding has an error `Outcome` saying why, which denies the action and goes to the decision
log; a new process takes its place, and the others go on meanwhile."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import logging
import os
import signal
import socket
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
from controlplane_adapters.policies.worker import KEPT, MEMORY_EXIT, NO_LIMITS_EXIT
from controlplane_domain.policies.entity import Outcome, Policy, PolicyCompileError

log = logging.getLogger("controlplane.policies")

WORKER = "controlplane_adapters.policies.worker"
START_SECONDS = 30.0
"""How long a new policy process may take to say it is ready (an interpreter starting on a busy machine)."""
STOP_SECONDS = 2.0
WATCHDOG_SECONDS = 1.0
"""How often the pool looks for a call past its wall-time backstop (only while one is pending)."""
WALL_FACTOR = 20
"""A call also ends at this many times its limit in wall time, at least `WALL_MINIMUM` (a process that gets no CPU
for that long is as good as hung)."""
WALL_MINIMUM = 5.0
MAX_ANSWER_BYTES = 8 * 1024 * 1024
"""An answer longer than this (a policy denying with millions of messages) kills its process."""
MEMORY_SHARE = 0.75
"""A process that aborted with its peak resident size at this share of its memory limit or more ran out of it
(rego-cpp's allocation failure aborts)."""
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder()
_READ_CHUNK = 256 * 1024


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """The pool's size and each process's limits (settings: CONTROLPLANE_POLICY_*, docs/configuration.md)."""

    processes: int = 2
    evaluation_timeout_ms: int = 250
    compile_timeout_ms: int = 2000
    memory_mb: int = 512
    max_module_bytes: int = MAX_MODULE_BYTES
    max_nesting: int = MAX_NESTING

    def timed_out(self, op: str) -> str:
        if op == "evaluate":
            return f"policy evaluation timed out after {self.evaluation_timeout_ms} ms"
        if op == "check":
            return f"compiling the module timed out after {self.compile_timeout_ms} ms"
        return f"compiling the policies timed out after {self.compile_timeout_ms} ms"

    def wall_seconds(self, op: str) -> float:
        limit = (self.evaluation_timeout_ms if op == "evaluate" else self.compile_timeout_ms) / 1000
        return max(WALL_MINIMUM, limit * WALL_FACTOR)

    @property
    def over_memory(self) -> str:
        return f"policy process went over its memory limit of {self.memory_mb} MiB"


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


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class _Process:
    """One policy process, asked one request at a time over a socket. Its socket's reader and its pidfd's (which
    turns readable when the process ends) are registered for as long as it lives: the answer, the end and why come
    to the event loop without a timer or a thread."""

    def __init__(
        self, pid: int, pidfd: int, sock: socket.socket, limits: SandboxLimits, loop: asyncio.AbstractEventLoop
    ) -> None:
        self.pid = pid
        self.limits = limits
        self.killed_for: str | None = None
        self.keys: collections.OrderedDict[str, None] = collections.OrderedDict()
        """The bundles sent to it (it may have forgotten some since: it then says so)."""
        self.deadline = float("inf")
        """When the pending call passes its wall-time backstop."""
        self.op = ""
        """The pending call's kind (`check`, `load`, `evaluate`), or the last one's."""
        self.ended: asyncio.Future[str] = loop.create_future()
        """Why the process ended, once it has (and is reaped)."""
        self._loop = loop
        self._pidfd = pidfd
        self._sock = sock
        self._buffer = bytearray()
        self._out: memoryview | None = None  # what is left to send of a frame the socket did not take at once
        self._waiter: asyncio.Future[bytes] | None = None
        loop.add_reader(sock.fileno(), self._readable)
        loop.add_reader(pidfd, self._exited)

    @property
    def alive(self) -> bool:
        return self.killed_for is None and not self.ended.done()

    @property
    def busy(self) -> bool:
        return self._waiter is not None

    def kill(self, reason: str) -> None:
        """SIGKILL through its pidfd (never another process that took its pid since)."""
        if self.killed_for is None:
            self.killed_for = reason
        if not self.ended.done():
            with contextlib.suppress(OSError):  # (ProcessLookupError: it has ended already)
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def _send(self, data: bytes) -> None:
        """Send a frame; what the socket does not take at once goes when it is writable."""
        if self._sock.fileno() < 0:
            return  # (the process is gone: its end says why)
        try:
            sent = self._sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            return
        if sent < len(data):
            self._out = memoryview(data)[sent:]
            self._loop.add_writer(self._sock.fileno(), self._writable)

    def _writable(self) -> None:
        assert self._out is not None
        try:
            sent = self._sock.send(self._out)
        except BlockingIOError:
            return
        except OSError:
            sent = len(self._out)
        self._out = self._out[sent:]
        if not self._out:
            self._out = None
            self._loop.remove_writer(self._sock.fileno())

    def _readable(self) -> None:
        try:
            chunk = self._sock.recv(_READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._close_socket()
            return
        buffer = self._buffer
        buffer += chunk
        while len(buffer) >= 4:
            size = int.from_bytes(buffer[:4], "big")
            if size > MAX_ANSWER_BYTES:
                self.kill(f"policy process answered more than {MAX_ANSWER_BYTES} bytes")
                return
            if len(buffer) < 4 + size:
                return
            frame = bytes(buffer[4 : 4 + size])
            del buffer[: 4 + size]
            waiter, self._waiter = self._waiter, None
            if waiter is None or waiter.done():
                self.kill("policy process answered what it was not asked")
                return
            waiter.set_result(frame)

    def _close_socket(self) -> None:
        if self._sock.fileno() < 0:
            return
        self._loop.remove_reader(self._sock.fileno())
        if self._out is not None:
            self._loop.remove_writer(self._sock.fileno())
            self._out = None
        self._sock.close()

    def _exited(self) -> None:
        """The pidfd is readable: the process has ended. Reap it (`wait4`: how it ended, its peak resident size),
        and fail the pending call with the reason."""
        try:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            why = self._why(status, usage.ru_maxrss * 1024)
        except ChildProcessError:  # (reaped by someone else: how it ended is lost)
            pid, why = self.pid, "policy process ended"
        if pid == 0:
            return  # (not reapable yet: the pidfd stays readable)
        self._loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._close_socket()
        self.killed_for = self.killed_for or why
        self.ended.set_result(self.killed_for)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(ProcessFailed(self.killed_for))

    def _why(self, status: int, peak: int) -> str:
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            if number == signal.SIGPROF:  # (worker.py's time limit)
                return self.limits.timed_out(self.op)
            if number == signal.SIGABRT and peak >= MEMORY_SHARE * self.limits.memory_mb * 1024 * 1024:
                return self.limits.over_memory
            return f"policy process crashed ({_signal_name(number)})"
        code = os.waitstatus_to_exitcode(status)
        if code == MEMORY_EXIT:
            return self.limits.over_memory
        if code == NO_LIMITS_EXIT:
            return "policy process could not set its limits"
        return f"policy process exited with status {code}"

    async def started(self) -> None:
        """Wait for the process's `ready`; ProcessFailed if it does not come."""
        self._waiter = self._loop.create_future()
        try:
            await asyncio.wait_for(self._waiter, START_SECONDS)
        except (TimeoutError, ProcessFailed):
            self.kill("did not start")
            await self.ended
            raise ProcessFailed("no policy process could be started") from None
        finally:
            self._waiter = None

    async def call(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to `request`, or ProcessFailed (the process is then dead or being killed)."""
        if not self.alive:
            raise ProcessFailed(self.killed_for or "policy process ended")
        try:
            frame = _ENCODER.encode(request)
        except (TypeError, OverflowError, msgspec.EncodeError) as exc:
            raise Unencodable(str(exc)) from None
        self.op = request["op"]
        self.deadline = time.monotonic() + self.limits.wall_seconds(self.op)
        waiter = self._waiter = self._loop.create_future()
        self._send(len(frame).to_bytes(4, "big") + frame)
        try:
            body = await waiter
        except ProcessFailed:
            raise
        except BaseException:  # cancelled mid-request: its answer would be read by the next one
            self.kill("the request was cancelled")
            raise
        finally:
            self._waiter = None
            self.deadline = float("inf")
        answer: dict[str, Any] = _DECODER.decode(body)
        return answer

    def remember(self, key: str) -> None:
        self.keys[key] = None
        self.keys.move_to_end(key)
        if len(self.keys) > KEPT:
            self.keys.popitem(last=False)

    async def stop(self) -> None:
        """Close its socket (it ends at the end of its input); killed if it is not gone within STOP_SECONDS."""
        if not self.ended.done() and self.killed_for is None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_WR)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.ended), STOP_SECONDS)
        self.kill("stopping")
        await self.ended

    def abandon(self) -> None:
        """Kill and reap it at once, without its event loop (another loop's: an embedder's second `asyncio.run`)."""
        if self.ended.done():
            return
        self.kill("stopping")
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        with contextlib.suppress(OSError):
            os.close(self._pidfd)
        self._sock.close()


class SandboxedPolicyEngine:
    """The domain's `PolicyEngine` on a pool of `limits.processes` policy processes, started when first needed
    (and again after one is killed), stopped by `stop()` (the app's shutdown)."""

    def __init__(self, limits: SandboxLimits | None = None) -> None:
        self.limits = limits or SandboxLimits()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._processes: set[_Process] = set()
        self._idle: list[_Process] = []
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

    async def _spawn(self) -> _Process:
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
        process = _Process(pid, pidfd, ours, self.limits, loop)
        self._processes.add(process)
        try:
            await process.started()
        except BaseException:
            self._processes.discard(process)
            process.kill("did not start")
            raise
        return process

    async def _acquire(self, key: str | None) -> _Process:
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

    def _release(self, process: _Process) -> None:
        self._idle.append(process)
        self._wake()

    def _replace(self, process: _Process) -> None:
        """The process is dead or being killed: reap it, and start another in its place meanwhile."""
        log.warning("policy process %d replaced: %s", process.pid, process.killed_for)
        task = asyncio.get_running_loop().create_task(self._replacement(process))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _replacement(self, dead: _Process) -> None:
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
        sent = [(str(i), rego) for i, (_, rego) in enumerate(modules) if i not in self._broken]
        self._key = hashlib.sha256(_ENCODER.encode(sent)).hexdigest()
        self._load = {"op": "load", "key": self._key, "modules": sent} if sent else None

    def _all_failed(self, reason: str) -> list[Outcome]:
        return [Outcome(policy_id, error=self._broken.get(index, reason)) for index, policy_id in enumerate(self._ids)]

    async def evaluate(self, document: Mapping[str, Any]) -> list[Outcome]:
        if self._load is None:
            return self._all_failed("the module does not compile")
        try:
            answer = await self._engine.ask({"op": "evaluate", "key": self._key, "input": document}, self._load)
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
