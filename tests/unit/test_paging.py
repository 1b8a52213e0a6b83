"""Paging visits every item exactly once, in (created_at, id) order, whatever the page size."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controlplane_adapters.clock import ManualClock
from controlplane_domain.agents import usecases as agents
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.paging import MAX_LIMIT, PageRequest
from tests.support import memory_ports


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(st.sampled_from([0, 0, 1, 2]), min_size=0, max_size=25),
    limit=st.integers(min_value=1, max_value=7),
)
async def test_pages_cover_every_item_once(steps: list[int], limit: int) -> None:
    clock = ManualClock()
    ports = memory_ports(clock)
    created = []
    for index, step in enumerate(steps):
        clock.advance(step)
        created.append(await agents.create_agent(ports, "org", agents.CreateAgent(name=f"a{index}")))
    await agents.create_agent(ports, "elsewhere", agents.CreateAgent(name="not mine"))
    seen = []
    offset = 0
    while True:
        page = await agents.list_agents(ports, "org", PageRequest(limit=limit, offset=offset))
        assert page.total == len(steps)
        assert len(page.items) <= limit
        if not page.items:
            break
        seen.extend(page.items)
        offset += limit
    assert [agent.id for agent in seen] == [
        agent.id for agent in sorted(created, key=lambda agent: (agent.created_at, agent.id))
    ]


@pytest.mark.parametrize(("limit", "offset"), [(0, 0), (MAX_LIMIT + 1, 0), (1, -1)])
def test_out_of_range_windows_are_rejected(limit: int, offset: int) -> None:
    with pytest.raises(ValidationFailed):
        PageRequest(limit=limit, offset=offset)
