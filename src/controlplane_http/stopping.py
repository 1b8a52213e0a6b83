"""The server's stop, as the requests that wait see it: long polls answer and event streams end at once, so that
their clients come back (to another node, or to this one restarted) instead of being cut when the stop's grace
period runs out."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

log = logging.getLogger("controlplane")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopping:
    """Set once, when the server begins to stop; what waits registers a callback that ends its wait."""

    __slots__ = ("_callbacks", "stopped")

    def __init__(self) -> None:
        self.stopped = False
        self._callbacks: set[Callable[[], object]] = set()

    def on_stop(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call `callback` when the server stops (at once if it is stopping already); returns the undoing."""
        if self.stopped:
            callback()
            return _nothing
        self._callbacks.add(callback)
        return lambda: self._callbacks.discard(callback)

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        callbacks, self._callbacks = self._callbacks, set()
        if callbacks:
            log.info("stopping: ending %d long poll(s) and event stream(s)", len(callbacks))
        for callback in callbacks:
            callback()

    async def watch_signals(self) -> None:
        """Stop when the process gets SIGINT or SIGTERM, before the handler already installed (the ASGI server's,
        which then stops taking requests and waits for the open ones). A start-up hook; the main thread only."""
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for number in STOP_SIGNALS:
            previous = signal.getsignal(number)
            if not callable(previous):  # nobody handles it: the default ends the process anyway
                continue
            signal.signal(number, _chained(loop, self.stop, previous))


def _chained(
    loop: asyncio.AbstractEventLoop, stop: Callable[[], None], previous: Callable[[int, FrameType | None], Any]
) -> Callable[[int, FrameType | None], None]:
    def handle(number: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(stop)
        previous(number, frame)

    return handle


def _nothing() -> None:
    return None
