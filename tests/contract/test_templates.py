"""Template repository contract on every store: round trip of parameters and body, scoping, unique names, pages."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from controlplane_domain.errors import Conflict
from controlplane_domain.paging import PageRequest
from controlplane_domain.templates.entity import Template, TemplateKind, TemplateParameter
from tests.contract.conftest import UowFactory

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def template(name: str, org: str = "org-a", *, at: int = 0) -> Template:
    return Template(
        id=f"{org}-template-{name}",
        organization_id=org,
        name=name,
        kind=TemplateKind.AGENT,
        description=None,
        parameters=(
            TemplateParameter(name="topic", description="what", required=True),
            TemplateParameter(name="depth", default={"levels": [1, 2.5, None, True]}),
        ),
        body={"name": "{{topic}}", "configuration": {"nested": ["{{depth}}", 3]}},
        created_at=T0 + timedelta(seconds=at),
        updated_at=T0 + timedelta(seconds=at),
    )


async def test_templates_round_trip_and_are_scoped(uow: UowFactory) -> None:
    stored = template("writer")
    async with uow() as work:
        await work.templates.add(stored)
        await work.commit()
    async with uow() as work:
        assert await work.templates.get("org-a", stored.id) == stored
        assert await work.templates.get("org-b", stored.id) is None
        await work.templates.delete("org-b", stored.id)
        await work.commit()
    changed = replace(stored, kind=TemplateKind.TEAM, description="d", parameters=(), body={"name": "t"})
    async with uow() as work:
        await work.templates.update(changed)
        await work.commit()
    async with uow() as work:
        assert await work.templates.get("org-a", stored.id, for_update=True) == changed
        await work.templates.delete("org-a", stored.id)
        await work.commit()
    async with uow() as work:
        assert await work.templates.get("org-a", stored.id) is None


async def test_names_are_unique_per_organization(uow: UowFactory) -> None:
    async with uow() as work:
        await work.templates.add(template("writer"))
        await work.templates.add(template("writer", "org-b"))
        await work.templates.add(template("other", at=1))
        await work.commit()
    with pytest.raises(Conflict) as raised:
        async with uow() as work:
            await work.templates.add(replace(template("writer"), id="another"))
    assert raised.value.details == {"field": "name"}
    with pytest.raises(Conflict):
        async with uow() as work:
            await work.templates.update(replace(template("other", at=1), name="writer"))


async def test_pages_are_in_creation_order_within_the_organization(uow: UowFactory) -> None:
    async with uow() as work:
        for index in (2, 0, 1):
            await work.templates.add(template(f"t{index}", at=index))
        await work.templates.add(template("theirs", "org-b"))
        await work.commit()
    async with uow() as work:
        first, total = await work.templates.list_page("org-a", PageRequest(limit=2))
        rest, _ = await work.templates.list_page("org-a", PageRequest(limit=2, offset=2))
    assert total == 3
    assert [item.name for item in first + rest] == ["t0", "t1", "t2"]
