"""The audit log on every store: the generic repositories record an audited write in its own transaction (kept on
commit, gone on rollback), only under an audit context; the log's filters, order and organization scoping."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import timedelta

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.secrets.cipher import AesGcmCipher
from controlplane_domain.audit.context import AuditContext, acting, explicitly
from controlplane_domain.audit.entity import AuditFilter, Outcome
from controlplane_domain.audit.usecases import REDACTED, record
from controlplane_domain.paging import Order, PageRequest
from controlplane_domain.principal import Role
from controlplane_domain.secrets.reveal import rotate_key
from tests.contract.conftest import UowFactory
from tests.contract.test_projects import T0, project
from tests.contract.test_repositories import agent
from tests.contract.test_secrets import CIPHER, secret

EVERYTHING = AuditFilter()
NEWEST = Order.DESC  # the audit log read as its HTTP list reads it by default


def context(clock: ManualClock, subject: str = "user-1", request_id: str = "req-1") -> AuditContext:
    counter = iter(range(1_000_000))
    return AuditContext(
        actor_subject=subject,
        actor_kind="jwt",
        actor_role=Role.ADMIN.value,
        credential_id=f"jwt:{subject}",
        client_ip="203.0.113.7",
        user_agent="tests/1.0",
        request_id=request_id,
        now=clock.now,
        new_id=lambda: f"{request_id}-{next(counter):04d}",
    )


async def events(uow: UowFactory, org: str = "org-a", where: AuditFilter = EVERYTHING) -> list[tuple[str, str]]:
    async with uow() as work:
        found, total = await work.audit_events.list_page(org, PageRequest(limit=200, order=NEWEST), where)
    assert total == len(found)
    return [(event.action, event.resource_id) for event in found]


async def test_a_committed_change_has_exactly_one_event_and_a_rolled_back_one_none(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    with acting(context(clock)):
        async with uow() as work:
            await work.agents.add(agent("kept"))
            await work.commit()
        async with uow() as work:
            await work.agents.add(agent("dropped"))  # left without commit: rolled back
        async with uow() as work:  # (the insert may be sent alone: it joins the event's transaction)
            await work.commit_with(lambda: work.agents.add(agent("atomic")))
    # One time, so newest first is by id, descending: the ids are made in order.
    assert await events(uow) == [("agent.create", "org-a-atomic"), ("agent.create", "org-a-kept")]
    async with uow() as work:
        assert await work.agents.get("org-a", "org-a-dropped") is None
        assert await work.agents.get("org-a", "org-a-atomic") is not None
        found, _ = await work.audit_events.list_page(
            "org-a", PageRequest(order=NEWEST), AuditFilter(resource_id="org-a-kept")
        )
    (event,) = found
    assert (event.actor_subject, event.actor_kind, event.actor_role) == ("user-1", "jwt", "admin")
    assert (event.client_ip, event.user_agent, event.request_id) == ("203.0.113.7", "tests/1.0", "req-1")
    assert (event.resource_type, event.outcome, event.occurred_at, event.details) == (
        "agent",
        Outcome.SUCCEEDED,
        T0,
        {},
    )


async def test_without_a_context_nothing_is_recorded(uow: UowFactory) -> None:
    async with uow() as work:
        await work.projects.add(project("quiet", "QT"))
        assert await record(work, organization_id="org-a", action="x.y", resource_type="x", resource_id="1") is None
        await work.commit()
    assert await events(uow) == []


async def test_updates_name_the_fields_they_changed_and_deletes_are_recorded(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    stored = project("ops", "OPS")
    async with uow() as work:
        await work.projects.add(stored)
        await work.commit()
    with acting(context(clock)):
        async with uow() as work:
            before = await work.projects.get("org-a", stored.id, for_update=True)
            assert before is not None
            clock.advance(1)
            await work.projects.update(replace(before, description="new", key="OPZ", updated_at=clock.now()))
            await work.commit()
        async with uow() as work:  # only bookkeeping changes: nothing to record
            before = await work.projects.get("org-a", stored.id, for_update=True)
            assert before is not None
            clock.advance(1)
            await work.projects.update(replace(before, updated_at=clock.now()))
            await work.commit()
        async with uow() as work:
            clock.advance(1)
            await work.projects.delete("org-a", stored.id)
            await work.commit()
    assert await events(uow) == [("project.delete", stored.id), ("project.update", stored.id)]
    async with uow() as work:
        found, _ = await work.audit_events.list_page(
            "org-a", PageRequest(order=NEWEST), AuditFilter(action="project.update")
        )
    assert found[0].details == {"changed": ["description", "key"]}


async def test_explicit_records_replace_the_generic_ones_and_redact_values(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    with acting(context(clock)):
        async with uow() as work:
            with explicitly():
                await work.projects.add(project("ops", "OPS"))
            await record(
                work,
                organization_id="org-a",
                action="project.import",
                resource_type="project",
                resource_id="org-a-project-ops",
                details={"name": "ops", "nested": [{"token": "tok-123", "id": "x"}], "Value": "hunter2"},
            )
            await work.commit()
    async with uow() as work:
        found, _ = await work.audit_events.list_page("org-a", PageRequest(order=NEWEST), EVERYTHING)
    (event,) = found
    assert event.action == "project.import"
    assert event.details == {"name": "ops", "nested": [{"token": REDACTED, "id": "x"}], "Value": REDACTED}


async def test_the_log_is_newest_first_filtered_and_scoped(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    with acting(context(clock, subject="alice", request_id="r-1")):
        async with uow() as work:
            await work.agents.add(agent("a1"))
            await work.agents.add(agent("b1", org="org-b"))
            await work.commit()
    clock.advance(60)
    with acting(context(clock, subject="bob", request_id="r-2")):
        async with uow() as work:
            await work.agents.add(agent("a2"))
            await record(
                work,
                organization_id="org-a",
                action="agent.execute",
                resource_type="agent",
                resource_id="org-a-a1",
                outcome=Outcome.DENIED,
                details={"messages": ["not on weekends"]},
            )
            await work.commit()
    newest_first = await events(uow)
    assert newest_first[-1] == ("agent.create", "org-a-a1")
    assert set(newest_first[:2]) == {("agent.create", "org-a-a2"), ("agent.execute", "org-a-a1")}
    assert await events(uow, "org-b") == [("agent.create", "org-b-b1")]
    assert await events(uow, where=AuditFilter(actor="alice")) == [("agent.create", "org-a-a1")]
    assert await events(uow, where=AuditFilter(outcome=Outcome.DENIED)) == [("agent.execute", "org-a-a1")]
    assert await events(uow, where=AuditFilter(request_id="r-1")) == [("agent.create", "org-a-a1")]
    assert await events(
        uow, where=AuditFilter(resource_type="agent", resource_id="org-a-a1", action="agent.create")
    ) == [("agent.create", "org-a-a1")]
    assert await events(uow, where=AuditFilter(since=T0 + timedelta(seconds=60))) == newest_first[:2]
    assert await events(uow, where=AuditFilter(until=T0 + timedelta(seconds=60))) == [("agent.create", "org-a-a1")]
    async with uow() as work:
        page, total = await work.audit_events.list_page(
            "org-a", PageRequest(limit=1, offset=1, order=NEWEST), EVERYTHING
        )
        assert (total, [(e.action, e.resource_id) for e in page]) == (3, [newest_first[1]])
        assert await work.audit_events.get("org-a", page[0].id) == page[0]
        assert await work.audit_events.get("org-b", page[0].id) is None


async def test_a_key_rotation_records_each_secret_once_as_what_it_is(uow: UowFactory) -> None:
    new = AesGcmCipher(os.urandom(32))
    async with uow() as work:
        for name in ("A", "B"):
            await work.secrets.add(secret(name, value=f"plain-{name}"))
        await work.commit()
    with acting(context(ManualClock(T0), subject="cli:ops")):
        assert await rotate_key(uow, CIPHER, new) == 2
    async with uow() as work:
        found, _ = await work.audit_events.list_page("org-a", PageRequest(order=NEWEST), EVERYTHING)
    assert sorted((event.action, event.resource_id) for event in found) == [
        ("secret.rotate_key", "org-a-secret-A"),
        ("secret.rotate_key", "org-a-secret-B"),
    ]
    assert all(event.details == {"from_key_id": CIPHER.key_id, "to_key_id": new.key_id} for event in found)
    assert all(event.actor_subject == "cli:ops" for event in found)
