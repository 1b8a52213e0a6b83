"""A per-node cache of the tail of execution event logs, shared by every stream that follows one execution."""

from __future__ import annotations

import asyncio
import bisect
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from controlplane_domain.executions import ExecutionEvent
from controlplane_domain.ports import EventBus, Subscription

MAX_EVENTS_KEPT = 1000
Fetch = Callable[[str, str, int], Awaitable[list[ExecutionEvent]]]


@dataclass
class _Tail:
    events: list[ExecutionEvent] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)
    reading: bool = False  # a read is in flight: every other follower waits for it
    waiting: list[asyncio.Future[None]] = field(default_factory=list)  # theirs, each its own (see `after`)
    subscription: Subscription | None = None  # the execution's wake-ups, seen by the cache itself
    fetched: bool = False
    stale: bool = True  # something was published since the last read began

    @property
    def last_seq(self) -> int:
        return self.seqs[-1] if self.seqs else 0

    def covers(self, seq: int) -> bool:
        """The cache holds every event after `seq` it knows of, and at least one."""
        return bool(self.seqs) and self.seqs[0] <= seq + 1 and seq < self.seqs[-1]

    def after(self, seq: int) -> list[ExecutionEvent]:
        return self.events[bisect.bisect_right(self.seqs, seq) :]

    def current(self, seq: int) -> bool:
        """Nothing follows `seq`: it is the last event read, and nothing was published since that read began
        (events are published after they commit, so one committed later would have marked the cache stale).
        Only meaningful when no read is under way: a read in flight has cleared the staleness it will answer."""
        if self.subscription is None or not self.fetched or seq != self.last_seq:
            return False
        if self.subscription.take():
            self.stale = True
        return not self.stale


class EventTail:
    """When many streams wake for one new event, one of them reads the log and the others share its read:
    one query per event per node instead of one per stream. Keyed by (organization, execution)."""

    def __init__(self, fetch: Fetch, max_executions: int = 2048, *, bus: EventBus | None = None, page: int = 200):
        self._fetch = fetch
        self._tails: OrderedDict[tuple[str, str], _Tail] = OrderedDict()
        self._max = max_executions
        self._bus = bus
        self._page = page  # the most events one fetch returns

    def _tail(self, key: tuple[str, str]) -> _Tail:
        tail = self._tails.get(key)
        if tail is None:
            subscription = self._bus.subscribe(f"execution:{key[1]}") if self._bus is not None else None
            tail = self._tails[key] = _Tail(subscription=subscription)
            while len(self._tails) > self._max:
                _, evicted = self._tails.popitem(last=False)
                if evicted.subscription is not None:
                    evicted.subscription.close()
        else:
            self._tails.move_to_end(key)
        return tail

    async def after(self, organization_id: str, execution_id: str, seq: int) -> list[ExecutionEvent]:
        tail = self._tail((organization_id, execution_id))
        while True:
            if tail.covers(seq):
                return tail.after(seq)
            if tail.reading:
                # Another follower is reading (and may bring what was just published): wait for its read with
                # every other follower (one wake-up for all, where a lock hands over to one waiter per loop
                # turn), then look again. A future of its own: a follower that goes away cancels only its own
                # wait (what `asyncio.shield` of one shared future gives, at 1.2 us more a waiter).
                waiter = asyncio.get_running_loop().create_future()
                tail.waiting.append(waiter)
                await waiter
                continue
            if tail.current(seq):
                return []
            break
        if tail.seqs and tail.seqs[0] > seq + 1:
            return await self._fetch(organization_id, execution_id, seq)  # older than the cache holds
        tail.reading = True
        try:
            return await self._read(tail, organization_id, execution_id, seq)
        finally:
            tail.reading = False
            waiting, tail.waiting = tail.waiting, []
            for waiter in waiting:
                if not waiter.done():
                    waiter.set_result(None)

    async def _read(self, tail: _Tail, organization_id: str, execution_id: str, seq: int) -> list[ExecutionEvent]:
        if tail.subscription is not None:
            tail.subscription.take()  # what is published from here on marks the cache stale again
        tail.stale = False
        try:
            while True:  # to the end of the log, so that the cache is complete as of this read
                fresh = await self._fetch(organization_id, execution_id, max(seq, tail.last_seq))
                for event in fresh:
                    if event.seq > tail.last_seq:
                        tail.events.append(event)
                        tail.seqs.append(event.seq)
                if len(fresh) < self._page:
                    break
        except BaseException:
            tail.stale = True
            raise
        tail.fetched = True
        answer = tail.after(seq)
        if len(tail.seqs) > MAX_EVENTS_KEPT:  # keep the recent half; laggards read the log directly
            del tail.events[: MAX_EVENTS_KEPT // 2], tail.seqs[: MAX_EVENTS_KEPT // 2]
        return answer

    def forget(self, organization_id: str, execution_id: str) -> None:
        tail = self._tails.pop((organization_id, execution_id), None)
        if tail is not None and tail.subscription is not None:
            tail.subscription.close()
