"""Cron schedules by croniter, in IANA time zones (zoneinfo): the domain's `CronCalendar`.

Across daylight-saving changes (croniter's behaviour, kept): a local time the spring-forward skips fires at the
instant the clock jumps (a 02:30 job fires at 03:00 local time that day); a local time the fall-back repeats fires
once, at its first occurrence, unless the hour field is `*` (an hourly job fires in both repeated hours)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterError, croniter

MAX_SKIPS = 8


def _zone(timezone: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return None


class CroniterCalendar:
    def problem(self, expression: str, timezone: str) -> tuple[str, str] | None:
        if len(expression.split()) != 5:
            return "cron", "must have five fields: minute hour day-of-month month day-of-week"
        try:
            croniter(expression, datetime(2026, 1, 1, tzinfo=UTC))
        except (CroniterBadCronError, CroniterError, ValueError, KeyError) as exc:
            return "cron", f"is not a valid cron expression ({exc})"
        if len(timezone) > 64 or "\x00" in timezone or _zone(timezone) is None:
            return "timezone", "must be an IANA time zone name, e.g. Europe/Paris"
        return None

    def next_after(self, expression: str, timezone: str, after: datetime) -> datetime:
        zone = _zone(timezone) or ZoneInfo("UTC")
        every_hour = expression.split()[1] == "*"
        schedule = croniter(expression, after.astimezone(zone))
        for _ in range(MAX_SKIPS):
            found: datetime = schedule.get_next(datetime)
            if every_hour or not _repeated(found, zone):
                return found.astimezone(UTC)
        return found.astimezone(UTC)


def _repeated(moment: datetime, zone: ZoneInfo) -> bool:
    """Whether `moment` is the second occurrence of a local time the fall-back repeats."""
    wall = moment.astimezone(zone).replace(tzinfo=None)
    first = wall.replace(tzinfo=zone, fold=0)
    return first.astimezone(UTC) < moment.astimezone(UTC)
