"""Fixed-window rate limiting per bucket: in memory, or in Redis for several nodes (on the `limits` library, imported
only then)."""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

WINDOW_SECONDS = 60
REDIS_TIMEOUT_SECONDS = 0.25  # a Redis that does not answer within this admits the request (see `hit`)
REDIS_PAUSE_SECONDS = 5.0  # after a failure, Redis is left alone this long: requests are admitted meanwhile


@dataclass(frozen=True, slots=True)
class RateDecision:
    """Whether a request is admitted, and what the X-RateLimit-* headers say."""

    allowed: bool
    limit: int
    remaining: int
    reset_at: int

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_at),
        }

    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        """The same headers, as ASGI wants them (what an admitted request's answer carries)."""
        return [
            (b"x-ratelimit-limit", b"%d" % self.limit),
            (b"x-ratelimit-remaining", b"%d" % self.remaining),
            (b"x-ratelimit-reset", b"%d" % self.reset_at),
        ]

    def retry_after(self, now: float) -> int:
        """Whole seconds until the window resets (at least 1, at most the one-minute window)."""
        return max(1, min(WINDOW_SECONDS, math.ceil(self.reset_at - now)))


class FixedWindows:
    """In-process fixed windows: one (reset time, count) pair per key, in the event loop's thread.

    `limits`' own memory storage keeps a lock per key and keeps restarting an expiry thread; on the
    request path that cost as much as authentication itself. Expired windows are swept as the table grows."""

    def __init__(self, window_seconds: int = WINDOW_SECONDS, sweep_at: int = 10_000) -> None:
        self.window_seconds = window_seconds
        self.sweep_at = sweep_at
        self._windows: dict[str, tuple[float, int]] = {}

    def incr(self, key: str, now: float) -> tuple[int, float]:
        """Count one hit; the window's count after it, and when the window ends."""
        reset, count = self._windows.get(key, (0.0, 0))
        if reset <= now:
            if len(self._windows) >= self.sweep_at:
                self._sweep(now)
            reset, count = now + self.window_seconds, 0
        count += 1
        self._windows[key] = (reset, count)
        return count, reset

    def _sweep(self, now: float) -> None:
        self._windows = {key: window for key, window in self._windows.items() if window[0] > now}


class RateLimiter:
    """Counts hits in fixed one-minute windows: in process, or in Redis through `limits`' storage (an atomic
    increment-and-expire script) when several nodes share the budget."""

    def __init__(
        self,
        redis_url: str | None = None,
        namespace: str = "controlplane",
        *,
        redis_timeout: float = REDIS_TIMEOUT_SECONDS,
        redis_pause: float = REDIS_PAUSE_SECONDS,
    ) -> None:
        self.namespace = namespace
        self._memory: FixedWindows | None = None
        self._redis: Any = None
        self._pause = redis_pause
        self._paused_until = 0.0  # monotonic time until which Redis is not asked (it failed)
        if redis_url:
            from limits.storage import storage_from_string  # only with Redis: a lone node counts in memory

            uri = redis_url.replace("redis://", "async+redis://", 1).replace("rediss://", "async+rediss://", 1)
            timeouts = {"socket_timeout": redis_timeout, "socket_connect_timeout": redis_timeout}
            self._redis = storage_from_string(uri, implementation="redispy", **timeouts)
        else:
            self._memory = FixedWindows()
        self.backend = "redis" if redis_url else "memory"

    async def hit(self, bucket: str, per_minute: int) -> RateDecision:
        """Count a request. When Redis fails or does not answer within its timeout, the request is admitted
        (availability first), and so is every request for the next `redis_pause` seconds without asking Redis:
        a Redis that hangs costs one request a timeout, not every request, and the log one warning a pause."""
        key = f"{self.namespace}:{bucket}"
        if self._memory is not None:
            count, reset = self._memory.incr(key, time.time())
            return RateDecision(count <= per_minute, per_minute, max(0, per_minute - count), math.ceil(reset))
        if time.monotonic() < self._paused_until:
            return self._admitted(per_minute)
        try:
            count = await self._redis.incr(key, WINDOW_SECONDS)
            reset = await self._redis.get_expiry(key)
        except Exception as exc:
            self._paused_until = time.monotonic() + self._pause
            log.warning("rate-limit store unavailable (%r); admitting requests for %.0f s", exc, self._pause)
            return self._admitted(per_minute)
        return RateDecision(count <= per_minute, per_minute, max(0, per_minute - count), math.ceil(reset))

    @staticmethod
    def _admitted(per_minute: int) -> RateDecision:
        return RateDecision(True, per_minute, per_minute, math.ceil(time.time() + WINDOW_SECONDS))
