"""One policy process of the sandbox (sandbox.py): its socket, its calls and how it ended (`PolicyProcess`).

The limits are the policy process's own (worker.py: `ITIMER_PROF` for its CPU time on a request, `RLIMIT_DATA` for
its memory), so a call arms no timer and reads no /proc: the process ends past a limit, and how it ended (`wait4`:
the signal, the status, its peak resident size) says why."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import Mapping
from typing import Any

import msgspec

from controlplane_adapters.policies.limits import (
    DECODER,
    ENCODER,
    MAX_ANSWER_BYTES,
    MEMORY_SHARE,
    START_SECONDS,
    STOP_SECONDS,
    ProcessFailed,
    SandboxLimits,
    Unencodable,
    signal_name,
)
from controlplane_adapters.policies.worker import KEPT, MEMORY_EXIT, NO_LIMITS_EXIT

log = logging.getLogger("controlplane.policies")
_READ_CHUNK = 256 * 1024


class PolicyProcess:
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
            return f"policy process crashed ({signal_name(number)})"
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
            frame = ENCODER.encode(request)
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
        answer: dict[str, Any] = DECODER.decode(body)
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
