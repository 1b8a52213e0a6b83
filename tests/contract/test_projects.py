"""Project repository contract on every store: scoping, two unique fields, memberships and their counts."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from controlplane_domain.errors import Conflict
from controlplane_domain.paging import PageRequest
from controlplane_domain.projects.entity import MemberKind, Project, ProjectCounts, ProjectStatus
from tests.contract.conftest import UowFactory
from tests.contract.test_repositories import agent, team

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def project(name: str, key: str, org: str = "org-a", *, at: int = 0) -> Project:
    return Project(
        id=f"{org}-project-{name}",
        organization_id=org,
        name=name,
        key=key,
        description=None,
        status=ProjectStatus.ACTIVE,
        settings={"nested": {"n": [1, 2]}},
        created_at=T0 + timedelta(seconds=at),
        updated_at=T0 + timedelta(seconds=at),
    )


async def test_projects_round_trip_and_are_scoped(uow: UowFactory) -> None:
    stored = project("ops", "OPS")
    async with uow() as work:
        await work.projects.add(stored)
        await work.commit()
    async with uow() as work:
        assert await work.projects.get("org-a", stored.id) == stored
        assert await work.projects.get("org-b", stored.id) is None
        await work.projects.delete("org-b", stored.id)
        await work.commit()
    async with uow() as work:
        changed = replace(stored, status=ProjectStatus.ARCHIVED, description="d", settings={})
        await work.projects.update(changed)
        await work.commit()
    async with uow() as work:
        assert await work.projects.get("org-a", stored.id, for_update=True) == changed


@pytest.mark.parametrize(("name", "key", "field"), [("ops", "OTHER", "name"), ("other", "OPS", "key")])
async def test_name_and_key_are_each_unique_per_organization(uow: UowFactory, name: str, key: str, field: str) -> None:
    async with uow() as work:
        await work.projects.add(project("ops", "OPS"))
        await work.projects.add(project("ops", "OPS", "org-b"))
        await work.commit()
    with pytest.raises(Conflict) as raised:
        async with uow() as work:
            await work.projects.add(replace(project(name, key), id="another"))
    assert raised.value.details == {"field": field}
    async with uow() as work:
        await work.projects.add(project("other", "OTHER"))
        await work.commit()
    with pytest.raises(Conflict):
        async with uow() as work:
            await work.projects.update(replace(project("other", "OTHER"), key="OPS"))


async def test_memberships_are_counted_idempotent_and_cascade(uow: UowFactory) -> None:
    ops, web = project("ops", "OPS"), project("web", "WEB", at=1)
    a1, a2, crew = agent("a1"), agent("a2"), team("crew")
    async with uow() as work:
        for item in (ops, web):
            await work.projects.add(item)
        await work.teams.add(crew)
        for item in (a1, a2):
            await work.agents.add(item)
        await work.commit()
    async with uow() as work:
        for member_id in (a1.id, a2.id, a1.id):
            await work.projects.set_member("org-a", ops.id, MemberKind.AGENT, member_id, True, T0)
        await work.projects.set_member("org-a", web.id, MemberKind.AGENT, a1.id, True, T0)
        await work.projects.set_member("org-a", web.id, MemberKind.TEAM, crew.id, True, T0)
        await work.projects.set_member("org-a", web.id, MemberKind.TEAM, "absent", False, T0)
        await work.commit()
    async with uow() as work:
        counts = await work.projects.counts("org-a", [ops.id, web.id])
        assert counts[ops.id] == ProjectCounts(agents=2, teams=0)
        assert counts[web.id] == ProjectCounts(agents=1, teams=1)
        assert await work.projects.counts("org-b", [ops.id, web.id]) in (
            {},
            {ops.id: ProjectCounts(), web.id: ProjectCounts()},
        )
        await work.agents.delete("org-a", a1.id)
        await work.teams.delete("org-a", crew.id)
        await work.projects.set_member("org-a", ops.id, MemberKind.AGENT, a2.id, False, T0)
        await work.commit()
    async with uow() as work:
        counts = await work.projects.counts("org-a", [ops.id, web.id])
        assert counts.get(ops.id, ProjectCounts()) == ProjectCounts()
        assert counts.get(web.id, ProjectCounts()) == ProjectCounts()
        await work.projects.set_member("org-a", web.id, MemberKind.AGENT, a2.id, True, T0)
        await work.projects.delete("org-a", web.id)
        await work.commit()
    async with uow() as work:
        assert await work.projects.get("org-a", web.id) is None
        assert await work.agents.get("org-a", a2.id) is not None
        assert await work.projects.counts("org-a", [web.id]) in ({}, {web.id: ProjectCounts()})


async def test_list_is_ordered_paged_and_counted(uow: UowFactory) -> None:
    async with uow() as work:
        for index in (2, 0, 1):
            await work.projects.add(project(f"p{index}", f"P{index}", at=index))
        await work.projects.add(project("theirs", "THEIRS", "org-b"))
        await work.commit()
    async with uow() as work:
        items, total = await work.projects.list_page("org-a", PageRequest(limit=2, offset=1))
    assert total == 3
    assert [item.name for item in items] == ["p1", "p2"]
