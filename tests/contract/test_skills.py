"""Skill repository contract on every store: scoping, unique names, attachments (overrides, order, cascades),
and `resolved_skills` (the domain function the lease will call) on each store's unit of work."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from controlplane_domain.environments.entity import Environment, EnvironmentStatus
from controlplane_domain.errors import Conflict
from controlplane_domain.paging import PageRequest
from controlplane_domain.skills.attachments import resolved_skills
from controlplane_domain.skills.entity import Skill, SkillOwner
from tests.contract.conftest import UowFactory
from tests.contract.test_repositories import agent, team

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
AGENT, TEAM, ENVIRONMENT = SkillOwner.AGENT, SkillOwner.TEAM, SkillOwner.ENVIRONMENT


def skill(name: str, org: str = "org-a", *, at: int = 0, enabled: bool = True, **configuration: object) -> Skill:
    return Skill(
        id=f"{org}-skill-{name}",
        organization_id=org,
        name=name,
        type="shell",
        description=None,
        enabled=enabled,
        configuration={"nested": {"n": [1, 2]}, **configuration},
        created_at=T0 + timedelta(seconds=at),
        updated_at=T0 + timedelta(seconds=at),
    )


def environment(name: str, org: str = "org-a") -> Environment:
    return Environment(
        id=f"{org}-env-{name}",
        organization_id=org,
        name=name,
        description=None,
        status=EnvironmentStatus.ACTIVE,
        variables={},
        metadata={},
        created_at=T0,
        updated_at=T0,
    )


async def test_skills_round_trip_are_scoped_and_named_once(uow: UowFactory) -> None:
    shell, web = skill("shell"), skill("web", at=1)
    async with uow() as work:
        for item in (web, shell, skill("shell", "org-b")):
            await work.skills.add(item)
        await work.commit()
    async with uow() as work:
        assert await work.skills.get("org-a", shell.id) == shell
        assert await work.skills.get("org-b", shell.id) is None
        assert sorted(found.id for found in await work.skills.get_many("org-a", [web.id, "org-b-skill-shell"])) == [
            web.id
        ]
        assert await work.skills.list_page("org-a", PageRequest(limit=1, offset=1)) == ([web], 2)
        changed = replace(shell, enabled=False, description="d", configuration={})
        await work.skills.update(changed)
        await work.commit()
    async with uow() as work:
        assert await work.skills.get("org-a", shell.id, for_update=True) == changed
    with pytest.raises(Conflict) as raised:
        async with uow() as work:
            await work.skills.add(replace(skill("shell"), id="another"))
    assert raised.value.details == {"field": "name"}


async def test_attachments_keep_their_override_order_and_go_with_owner_or_skill(uow: UowFactory) -> None:
    one, two, other = skill("one"), skill("two"), skill("one", "org-b")
    a1, crew, env = agent("a1"), team("crew"), environment("e")
    async with uow() as work:
        for item in (one, two, other):
            await work.skills.add(item)
        await work.teams.add(crew)
        await work.agents.add(a1)
        await work.environments.add(env)
        await work.skills.attach("org-a", ENVIRONMENT, env.id, two.id, None, T0)
        await work.skills.attach("org-a", ENVIRONMENT, env.id, one.id, {"k": 1}, T0 + timedelta(seconds=1))
        await work.skills.attach("org-a", AGENT, a1.id, one.id, {"k": 2}, T0)
        await work.skills.attach("org-a", TEAM, crew.id, one.id, None, T0)
        await work.commit()
    async with uow() as work:
        assert list((await work.skills.attachments("org-a", ENVIRONMENT, env.id)).items()) == [
            (two.id, None),
            (one.id, {"k": 1}),
        ]
        assert await work.skills.attachments("org-b", ENVIRONMENT, env.id) == {}
        assert await work.skills.owners("org-a", AGENT, one.id) == [a1.id]
        assert await work.skills.owners("org-b", AGENT, one.id) == []
        # attaching again replaces the override and keeps the place
        await work.skills.attach("org-a", ENVIRONMENT, env.id, two.id, {"z": [1]}, T0 + timedelta(seconds=9))
        await work.skills.detach("org-a", TEAM, crew.id, [one.id, two.id])
        await work.commit()
    async with uow() as work:
        assert list(await work.skills.attachments("org-a", ENVIRONMENT, env.id)) == [two.id, one.id]
        assert (await work.skills.attachments("org-a", ENVIRONMENT, env.id))[two.id] == {"z": [1]}
        assert await work.skills.owners("org-a", TEAM, one.id) == []
        await work.agents.delete("org-a", a1.id)
        await work.skills.delete("org-a", two.id)
        await work.commit()
    async with uow() as work:
        assert await work.skills.owners("org-a", AGENT, one.id) == []
        assert await work.skills.attachments("org-a", ENVIRONMENT, env.id) == {one.id: {"k": 1}}
        assert await work.skills.owners("org-a", ENVIRONMENT, two.id) == []


async def test_resolved_skills_merge_environment_then_team_then_agent(uow: UowFactory) -> None:
    shell = skill("shell", timeout_seconds=5, working_dir="/w")
    web, off, theirs = skill("web", at=1), skill("off", at=2, enabled=False), skill("x", "org-b")
    crew, env = team("crew"), environment("e")
    a1 = agent("a1", team_id=crew.id, skill_ids=[shell.id, off.id])
    async with uow() as work:
        for item in (shell, web, off, theirs):
            await work.skills.add(item)
        await work.teams.add(replace(crew, skill_ids=[web.id, shell.id]))
        await work.agents.add(a1)
        await work.environments.add(env)
        await work.skills.attach("org-a", ENVIRONMENT, env.id, shell.id, {"timeout_seconds": 7, "env": {"A": "1"}}, T0)
        await work.skills.attach("org-a", TEAM, crew.id, web.id, None, T0)
        await work.skills.attach("org-a", TEAM, crew.id, shell.id, {"working_dir": None}, T0)
        await work.skills.attach("org-a", AGENT, a1.id, shell.id, {"env": {"B": "2"}}, T0)
        await work.skills.attach("org-a", AGENT, a1.id, off.id, None, T0)
        await work.commit()
    async with uow() as work:
        resolved = await resolved_skills(work, "org-a", a1.id, crew.id, env.id)
        assert [(item.name, item.source, item.layers) for item in resolved] == [
            ("shell", AGENT, (ENVIRONMENT, TEAM, AGENT)),
            ("web", TEAM, (TEAM,)),
        ]
        assert resolved[0].configuration == {"nested": {"n": [1, 2]}, "timeout_seconds": 7, "env": {"A": "1", "B": "2"}}
        without = await resolved_skills(work, "org-a", a1.id, None, None)
        assert [(item.name, item.configuration) for item in without] == [
            ("shell", shell.configuration | {"env": {"B": "2"}})
        ]
        assert await resolved_skills(work, "org-b", a1.id, crew.id, env.id) == []
        assert await resolved_skills(work, "org-a", "gone", None, "gone") == []
