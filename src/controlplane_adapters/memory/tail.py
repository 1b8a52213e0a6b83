"""A per-node cache of the tail of execution event logs, shared by every stream that follows one execution."""

from __future__ import annotations

import asyncio
import bisect
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from controlplane_domain.executions.entity import ExecutionEvent
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
    # The cache holds every event after `base` (as of its last read); None until a read. A first read after seq N
    # learns nothing of the events up to N: `current(0)` must not say "nothing after 0" because a reader that
    # resumed at the end of the log found nothing after N.
    base: int | None = None
    stale: bool = True  # something was published since the last read began

    @property
    def last_seq(self) -> int:
        """The last event the cache knows of (held, or, for an empty cache, the sequence number it read after)."""
        return self.seqs[-1] if self.seqs else (self.base or 0)

    def knows(self, seq: int) -> bool:
        """Every event after `seq` that the last read found is in the cache."""
        return self.base is not None and self.base <= seq

    def covers(self, seq: int) -> bool:
        """The cache holds every event after `seq` it knows of, and at least one."""
        return self.knows(seq) and bool(self.seqs) and seq < self.seqs[-1]

    def after(self, seq: int) -> list[ExecutionEvent]:
        return self.events[bisect.bisect_right(self.seqs, seq) :]

    def current(self, seq: int) -> bool:
        """Nothing follows `seq`: it is the last event read, and nothing was published since that read began
        (events are published after they commit, so one committed later would have marked the cache stale).
        Only meaningful when no read is under way: a read in flight has cleared the staleness it will answer."""
        if self.subscription is None or not self.knows(seq) or seq != self.last_seq:
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
                # wait (what `asyncio.shield` of one shared future gives, at a higher cost a waiter).
                waiter = asyncio.get_running_loop().create_future()
                tail.waiting.append(waiter)
                await waiter
                continue
            if tail.current(seq):
                return []
            break
        if tail.base is not None and seq < tail.base:
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
        if tail.base is None:
            tail.base = seq  # what this read brings is every event after seq
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
        answer = tail.after(seq)
        if len(tail.seqs) > MAX_EVENTS_KEPT:  # keep the recent half; laggards read the log directly
            tail.base = tail.seqs[MAX_EVENTS_KEPT // 2 - 1]
            del tail.events[: MAX_EVENTS_KEPT // 2], tail.seqs[: MAX_EVENTS_KEPT // 2]
        return answer

    def forget(self, organization_id: str, execution_id: str) -> None:
        tail = self._tails.pop((organization_id, execution_id), None)
        if tail is not None and tail.subscription is not None:
            tail.subscription.close()
