"""A loop-lag monitor for tests: a task that sleeps `interval` at a time in the event loop under test and records,
for the worst of its sleeps, how late it woke (wall time) and how much CPU time the loop's own thread spent
meanwhile.

The second figure is the one to bound on a shared machine. A sleep of 10 ms that ends 300 ms late may mean that
the server ran one callback for 300 ms (it blocked the loop), or that the machine gave the process no core for
300 ms (other processes' load, which no server change can prevent). The CPU time of the loop's thread tells the
two apart: a callback that blocks the loop burns the thread's CPU for as long as it blocks; a process waiting
for a core burns none. (Threads the server starts, `asyncio.to_thread`'s, are not the loop's thread: their work
is not counted, as it does not hold the loop: they give the interpreter lock back every `sys.getswitchinterval()`
seconds.) Usage:

    async with LoopLag() as lag:
        ... hostile requests ...
    assert lag.max_busy < 0.1
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from types import TracebackType
from typing import Self


class LoopLag:
    """Sleeps `interval` seconds in a loop, in the running event loop, from `async with` to its end."""

    def __init__(self, interval: float = 0.01) -> None:
        self.interval = interval
        self.max_lag = 0.0
        """The most a wake-up came late (wall seconds past `interval`)."""
        self.max_busy = 0.0
        """The most CPU time the loop's thread spent between a sleep's start and its wake-up (seconds)."""
        self.wakeups = 0
        self._task: asyncio.Task[None] | None = None
        self._started, self._cpu = time.monotonic(), time.thread_time()

    async def __aenter__(self) -> Self:
        # The garbage of the tests run before in this process (their apps, cyclic) is collected now, not by a full
        # collection that would fall within the measure: its pause is the test process's history, not the server's
        gc.collect()
        self._task = asyncio.create_task(self._watch())
        await asyncio.sleep(0)  # its first sleep starts now
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._record()  # the sleep under way counts too: a loop blocked until the end never woke the monitor
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _record(self) -> None:
        self.max_lag = max(self.max_lag, time.monotonic() - self._started - self.interval)
        self.max_busy = max(self.max_busy, time.thread_time() - self._cpu)

    async def _watch(self) -> None:
        while True:
            self._started, self._cpu = time.monotonic(), time.thread_time()
            await asyncio.sleep(self.interval)
            self._record()
            self.wakeups += 1
