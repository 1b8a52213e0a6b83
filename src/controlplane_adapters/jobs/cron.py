"""Cron schedules by cronsim, in IANA time zones (zoneinfo): the domain's `CronCalendar`.

A schedule names local wall-clock times: cronsim walks them in naive local time (each matching wall time once,
in order), and each is then placed on the time line of its zone by one rule, whatever the expression:

- a wall time that exists once is that instant;
- a wall time the fall-back repeats fires once, at its first occurrence (fold 0), for every schedule: `30 1 * * *`,
  `*/5 1 * * *`, `* 1 * * *` and `0 * * * *` alike (an hourly job fires 24 times on a 25-hour day). One whose
  first occurrence is already past when the count starts (a job created in the repeated hour) waits for the next
  day's, never firing in the repeat;
- the wall times a spring-forward skips (the gap) fire once together, at the instant the clock jumps (a 02:30 job
  fires at 03:00 local time that day; `*/5 2 * * *` fires once at 03:00, not twelve times), merged with a firing
  due at that very instant (a job of `0,30 2,3 * * *` fires once at 03:00). So a daily job never loses its day.

Fire times strictly increase, each local wall time fires at most once, and none is skipped but those inside a gap
(tests/unit/test_cron_dst.py checks this on many zones, schedules and both transitions)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

MAX_STEPS = 1500
"""Wall times looked at for one answer at most: those whose first occurrence is already past (at most a repeated
period's worth, a minute apart) and the one after."""


def _zone(timezone: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return None


class CronsimCalendar:
    def problem(self, expression: str, timezone: str) -> tuple[str, str] | None:
        if len(expression.split()) != 5:
            return "cron", "must have five fields: minute hour day-of-month month day-of-week"
        try:
            next(CronSim(expression, datetime(2026, 1, 1)))
        except (CronSimError, ValueError, IndexError, KeyError) as exc:
            return "cron", f"is not a valid cron expression ({exc})"
        except StopIteration:
            return "cron", "never fires"
        if len(timezone) > 64 or "\x00" in timezone or _zone(timezone) is None:
            return "timezone", "must be an IANA time zone name, e.g. Europe/Paris"
        return None

    def next_after(self, expression: str, timezone: str, after: datetime) -> datetime:
        zone = _zone(timezone) or ZoneInfo("UTC")
        after = after.astimezone(UTC)
        walls = CronSim(expression, after.astimezone(zone).replace(tzinfo=None))
        for _ in range(MAX_STEPS):
            found = instant(next(walls), zone)
            if found > after:
                return found
        raise RuntimeError(f"no firing of {expression!r} in {timezone} found after {after.isoformat()}")


def instant(wall: datetime, zone: ZoneInfo) -> datetime:
    """The UTC instant at which the naive local `wall` fires in `zone`: its first occurrence when the fall-back
    repeats it, the instant the clock jumps when the spring-forward skips it."""
    first = wall.replace(tzinfo=zone, fold=0)
    moment = first.astimezone(UTC)
    if moment.astimezone(zone).replace(tzinfo=None) == wall:
        return moment
    return _jump(wall, zone)


def _jump(wall: datetime, zone: ZoneInfo) -> datetime:
    """The instant a gap holding `wall` ends: read with the offset after the jump (fold 1) it is before the jump,
    with the offset before (fold 0) after it; the jump lies between, found to the second."""
    before = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
    after = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    if before > after:
        before, after = after, before
    offset = before.astimezone(zone).utcoffset()
    span = int((after - before).total_seconds())
    while span > 1:
        middle = before + timedelta(seconds=span // 2)
        if middle.astimezone(zone).utcoffset() == offset:
            before = middle
        else:
            after = middle
        span = int((after - before).total_seconds())
    return after
