"""Jobs' pure rules: placeholders in prompts, cron expressions and time zones, signatures against a given clock."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from controlplane_adapters.jobs.cron import CronsimCalendar
from controlplane_adapters.jobs.trigger_signatures import StandardWebhooks, sign
from controlplane_domain.jobs.entity import render_prompt


def test_placeholders_take_the_payloads_values() -> None:
    payload = {"repo": {"name": "api", "stars": 3}, "items": ["a", "b"], "text": "x"}
    rendered = render_prompt(
        "{{payload.repo.name}}/{{ payload.repo.stars }}/{{payload.items.1}}/{{payload.nope}}/", payload
    )
    assert rendered == "api/3/b//"
    assert json.loads(render_prompt("{{payload}}", payload)) == payload
    assert render_prompt("{{payload.repo}}", payload) == '{"name": "api", "stars": 3}'
    assert render_prompt("{{secret:X}} {{input.x}}", payload) == "{{secret:X}} {{input.x}}"


def test_cron_expressions_and_zones_are_checked() -> None:
    calendar = CronsimCalendar()
    assert calendar.problem("*/5 * * * 1-5", "Europe/Paris") is None
    for expression in ("", "* * * *", "* * * * * *", "61 * * * *", "* * 32 * *", "hello world x y z"):
        assert calendar.problem(expression, "UTC") is not None
        assert calendar.problem(expression, "UTC")[0] == "cron"
    for zone in ("Mars/Olympus", "../../etc/passwd", "", "x" * 100):
        assert calendar.problem("* * * * *", zone) == ("timezone", "must be an IANA time zone name, e.g. Europe/Paris")


def test_the_next_firing_is_strictly_after() -> None:
    calendar = CronsimCalendar()
    midnight = datetime(2026, 1, 1, tzinfo=UTC)
    assert calendar.next_after("0 0 * * *", "UTC", midnight) == midnight + timedelta(days=1)
    assert calendar.next_after("0 0 * * *", "Asia/Tokyo", midnight) == datetime(2026, 1, 1, 15, tzinfo=UTC)


def test_signatures_are_checked_against_the_given_time_not_the_system_clock() -> None:
    webhooks = StandardWebhooks()
    secret = webhooks.new_secret()
    long_ago = datetime(2001, 1, 1, tzinfo=UTC)
    headers = sign(secret, "msg", long_ago, b"{}")
    assert webhooks.verify(secret, b"{}", headers, long_ago + timedelta(minutes=4))
    assert not webhooks.verify(secret, b"{}", headers, long_ago + timedelta(minutes=6))
    assert not webhooks.verify(secret, b"{}", headers, datetime.now(UTC))
    assert not webhooks.verify(secret, b"{ }", headers, long_ago)
    assert not webhooks.verify(secret, b"\xff", {**headers, "webhook-signature": "nonsense"}, long_ago)
