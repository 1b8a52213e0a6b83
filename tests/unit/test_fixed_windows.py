"""The in-process rate-limit counter: fixed windows per key, reset at the window's end, swept as it grows."""

from __future__ import annotations

from controlplane_adapters.ratelimit import FixedWindows, RateLimiter


def test_a_window_counts_until_it_ends_then_starts_again() -> None:
    windows = FixedWindows(window_seconds=60)
    assert windows.incr("a", 1000.0) == (1, 1060.0)
    assert windows.incr("a", 1059.9) == (2, 1060.0)
    assert windows.incr("b", 1059.9) == (1, 1119.9)  # each key has its own window
    assert windows.incr("a", 1060.0) == (1, 1120.0)


def test_expired_windows_are_swept_when_the_table_is_full() -> None:
    windows = FixedWindows(window_seconds=60, sweep_at=3)
    for key in ("a", "b", "c"):
        windows.incr(key, 0.0)
    windows.incr("d", 100.0)  # a new window with a full table sweeps the expired ones first
    assert windows.incr("a", 100.0) == (1, 160.0)
    assert len(windows._windows) == 2


async def test_the_limiter_admits_up_to_the_budget_and_reports_what_is_left() -> None:
    limiter = RateLimiter()
    decisions = [await limiter.hit("api:key", 2) for _ in range(3)]
    assert [(d.allowed, d.remaining, d.limit) for d in decisions] == [(True, 1, 2), (True, 0, 2), (False, 0, 2)]
    assert decisions[0].reset_at == decisions[2].reset_at
    assert (await limiter.hit("api:other", 2)).allowed
