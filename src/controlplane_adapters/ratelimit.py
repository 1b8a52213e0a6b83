"""Fixed-window rate limiting per bucket, on the `limits` library: in memory, or in Redis for several nodes."""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from functools import lru_cache

from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.strategies import FixedWindowRateLimiter
from limits.storage import storage_from_string

log = logging.getLogger(__name__)

WINDOW_SECONDS = 60


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

    def retry_after(self, now: float) -> int:
        """Whole seconds until the window resets (at least 1, at most the one-minute window)."""
        return max(1, min(WINDOW_SECONDS, math.ceil(self.reset_at - now)))


@lru_cache(maxsize=256)
def _per_minute(amount: int) -> RateLimitItem:
    return RateLimitItemPerMinute(amount)


class RateLimiter:
    """Counts hits atomically (one in-process counter, or a Redis script) and reports the window."""

    def __init__(self, redis_url: str | None = None, namespace: str = "controlplane") -> None:
        self.namespace = namespace
        if redis_url:
            uri = redis_url.replace("redis://", "async+redis://", 1).replace("rediss://", "async+rediss://", 1)
            storage = storage_from_string(uri, implementation="redispy")
        else:
            storage = storage_from_string("async+memory://")
        self.backend = "redis" if redis_url else "memory"
        self._limiter = FixedWindowRateLimiter(storage)

    async def hit(self, bucket: str, per_minute: int) -> RateDecision:
        item = _per_minute(per_minute)
        key = f"{self.namespace}:{bucket}"
        try:
            allowed = await self._limiter.hit(item, key)
            stats = await self._limiter.get_window_stats(item, key)
        except Exception:  # the store is down: admit (availability first) and say so in the log
            log.exception("rate-limit store unavailable; admitting the request")
            return RateDecision(True, per_minute, per_minute, math.ceil(time.time() + WINDOW_SECONDS))
        return RateDecision(allowed, per_minute, max(0, stats.remaining), math.ceil(stats.reset_time))
