"""Cron firings across daylight-saving changes, for every schedule: a local wall time the fall-back repeats fires
once (at its first occurrence), the wall times a spring-forward skips fire once together at the instant of the
jump, and nothing else is skipped or repeated. (Issue #31: `* 1 * * *` fired seven extra times in New York's
repeated hour on 2026-11-01, `*/5 1 * * *` an extra 01:35; only a single daily time fired once.)

The property, over several zones, both transitions of 2026 and many schedules, the count starting anywhere in the
days around the change: the fire times strictly increase; their local wall times are all different; every wall
time matching the schedule that exists (once or twice) and whose first occurrence is after the start fires, at
that first occurrence; and the wall times inside a gap fire exactly once, at the jump, when any of them matches
(merged with a firing due at the jump itself)."""

from __future__ import annotations

import functools
import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from controlplane_adapters.jobs.cron import CronsimCalendar

CALENDAR = CronsimCalendar()
NEW_YORK = ZoneInfo("America/New_York")
ZONES = [
    "America/New_York",  # 02:00 -> 03:00 / 02:00 -> 01:00, at 2 a.m. local
    "Europe/Paris",  # at 2 a.m. / 3 a.m. local
    "Europe/London",  # at 1 a.m. / 2 a.m. local
    "Australia/Sydney",  # southern hemisphere: back in April, forward in October
    "Australia/Lord_Howe",  # a half-hour change
    "America/Santiago",  # a change at midnight: 00:00 skipped / 23:00-24:00 repeated
    "Asia/Tehran",  # no change since 2022: the property holds on a plain day too
]
MINUTES = ["0", "30", "*/5", "*/7", "*", "15,45", "0-10", "59"]
HOURS = ["*", "0", "1", "2", "3", "1,2", "0-3", "*/2", "22-23", "23"]


@functools.cache
def transitions(zone: ZoneInfo, year: int = 2026) -> list[datetime]:
    """The UTC instants (to the minute) at which the zone's offset changes during the year."""
    found = []
    moment = datetime(year, 1, 1, tzinfo=UTC)
    offset = moment.astimezone(zone).utcoffset()
    while moment.year == year:
        step = moment + timedelta(hours=1)
        if step.astimezone(zone).utcoffset() != offset:
            while moment.astimezone(zone).utcoffset() == offset:
                moment += timedelta(minutes=1)
            found.append(moment)
            offset = moment.astimezone(zone).utcoffset()
        moment = step if moment < step else moment + timedelta(minutes=1)
    return found


def matches(wall: datetime, minutes: set[int], hours: set[int]) -> bool:
    return wall.minute in minutes and wall.hour in hours


def expand(field: str, top: int) -> set[int]:
    values: set[int] = set()
    for part in field.split(","):
        base, _, step = part.partition("/")
        low, high = (0, top) if base == "*" else (int(base.split("-")[0]), int(base.split("-")[-1]))
        values.update(range(low, high + 1, int(step or 1)))
    return values


def first_occurrence(wall: datetime, zone: ZoneInfo) -> datetime | None:
    """The instant a naive wall time first happens in the zone; None when a gap skips it."""
    moment = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    return moment if moment.astimezone(zone).replace(tzinfo=None) == wall else None


def fire_times(expression: str, zone: str, start: datetime, end: datetime) -> list[datetime]:
    fired, moment = [], start
    while True:
        moment = CALENDAR.next_after(expression, zone, moment)
        if moment > end:
            return fired
        fired.append(moment)


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str, str, datetime, datetime]:
    name = draw(st.sampled_from(ZONES))
    zone = ZoneInfo(name)
    changes = transitions(zone) or [datetime(2026, 6, 1, tzinfo=UTC)]
    change = draw(st.sampled_from(changes))
    start = change + timedelta(minutes=draw(st.integers(-30 * 60, 6 * 60)))
    minute, hour = draw(st.sampled_from(MINUTES)), draw(st.sampled_from(HOURS))
    return name, minute, hour, start, start + timedelta(hours=30)


@settings(max_examples=60, deadline=None)
@given(cases())
def test_every_schedule_fires_each_wall_time_once_across_both_transitions(
    case: tuple[str, str, str, datetime, datetime],
) -> None:
    name, minute, hour, start, end = case
    zone = ZoneInfo(name)
    fired = fire_times(f"{minute} {hour} * * *", name, start, end)
    assert all(earlier < later for earlier, later in itertools.pairwise(fired))  # strictly increasing
    walls = [moment.astimezone(zone).replace(tzinfo=None) for moment in fired]
    assert len(set(walls)) == len(walls)  # no local wall time fires twice
    minutes, hours = expand(minute, 59), expand(hour, 23)
    expected: list[datetime] = []
    wall = start.astimezone(zone).replace(tzinfo=None, second=0, microsecond=0) - timedelta(hours=3)
    while wall <= end.astimezone(zone).replace(tzinfo=None) + timedelta(hours=3):
        if matches(wall, minutes, hours):
            first = first_occurrence(wall, zone)
            if first is None:  # inside a gap: fires at the jump, the first real minute after it
                jump = wall
                while (first := first_occurrence(jump, zone)) is None:
                    jump += timedelta(minutes=1)
            if start < first <= end and (not expected or expected[-1] != first):
                expected.append(first)
        wall += timedelta(minutes=1)
    assert fired == expected


def test_the_cases_of_the_issue_fire_once_in_new_yorks_repeated_hour() -> None:
    day = datetime(2026, 11, 1, 4, tzinfo=UTC)  # midnight EDT; 01:00-02:00 happens twice (EDT, then EST)
    every_minute = fire_times("* 1 * * *", "America/New_York", day, day + timedelta(days=1))
    assert len(every_minute) == 60
    assert [moment.astimezone(NEW_YORK).strftime("%H:%M %Z") for moment in every_minute[:2]] == [
        "01:00 EDT", "01:01 EDT",
    ]  # fmt: skip
    five = fire_times("*/5 1 * * *", "America/New_York", day, day + timedelta(days=1))
    assert [moment.astimezone(NEW_YORK).strftime("%H:%M %Z") for moment in five] == [
        f"01:{minute:02d} EDT" for minute in range(0, 60, 5)
    ]
    hourly = fire_times("0 * * * *", "America/New_York", day - timedelta(minutes=1), day + timedelta(hours=24))
    assert len(hourly) == 24  # a 25-hour day: 01:00 fires once
    created_in_the_repeat = datetime(2026, 11, 1, 6, 10, tzinfo=UTC)  # 01:10 EST, the second 01:10
    assert CALENDAR.next_after("*/5 1 * * *", "America/New_York", created_in_the_repeat) == datetime(
        2026, 11, 2, 6, tzinfo=UTC
    )  # 01:15 EST is a repeat of 01:15 EDT, gone by: the next is tomorrow's 01:00 EST


def test_a_spring_forward_gap_fires_once_at_the_jump() -> None:
    day = datetime(2026, 3, 8, 5, tzinfo=UTC)  # midnight EST; 02:00-03:00 does not happen
    jump = datetime(2026, 3, 8, 7, tzinfo=UTC)  # 03:00 EDT
    assert fire_times("30 2 * * *", "America/New_York", day, day + timedelta(hours=23)) == [jump]
    assert fire_times("*/5 2 * * *", "America/New_York", day, day + timedelta(hours=23)) == [jump]
    both = fire_times("0,30 2,3 * * *", "America/New_York", day, day + timedelta(hours=23))
    assert both == [jump, jump + timedelta(minutes=30)]
    assert CALENDAR.next_after("30 2 * * *", "America/New_York", jump) == datetime(2026, 3, 9, 6, 30, tzinfo=UTC)
