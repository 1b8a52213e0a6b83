"""A list's `name` and `q` on every store are the rule `PageRequest.keeps_name` states (exact name; substring with
ASCII letters folded, LIKE's wildcards and escape as plain characters, any other character exactly), and its
`order` is (created_at, id) either way: random names, random queries, ties on the time."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from controlplane_domain.paging import Order, PageRequest
from tests.contract.conftest import UowFactory
from tests.contract.test_repositories import agent

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
# Letters that fold (ASCII) and letters that do not (Latin-1, Greek, Turkish dotless i, German sharp s), the
# characters LIKE reads specially, and a few others.
ALPHABET = "aAbBzZ%_\\éÉßẞ\u0131I\u0130\u03c3\u03a3\u03c2 -.*[]^'\"0"
names = st.text(st.sampled_from(ALPHABET), min_size=1, max_size=6)
queries = st.text(st.sampled_from(ALPHABET), max_size=3)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    made=st.lists(names, min_size=1, max_size=8, unique=True),
    instants=st.lists(st.integers(0, 2), min_size=8, max_size=8),
    q=st.none() | queries,
    by_name=st.booleans(),
    order=st.sampled_from(Order),
    data=st.data(),
)
@example(made=["a_b", "aXb", "A%B", "a\\b", "ÉB"], instants=[0] * 8, q="_", by_name=False, order=Order.ASC, data=None)
@example(made=["a_b", "aXb", "A%B", "a\\b", "éb"], instants=[1, 0] * 4, q="A%", by_name=False, order=Order.DESC,
         data=None)  # fmt: skip
@example(made=["a_b", "aXb", "A%B", "a\\b", "éb"], instants=[0] * 8, q="\\", by_name=False, order=Order.ASC,
         data=None)  # fmt: skip
@example(made=["Éb", "éb", "EB"], instants=[0] * 8, q="éB", by_name=False, order=Order.ASC, data=None)
async def test_names_and_order_follow_the_rule_on_every_store(
    uow: UowFactory,
    made: list[str],
    instants: list[int],
    q: str | None,
    by_name: bool,
    order: Order,
    data: st.DataObject,
) -> None:
    org = f"org-{uuid.uuid4().hex[:12]}"
    agents = [replace(agent(name, org, at=instants[n]), id=str(uuid.uuid4())) for n, name in enumerate(made)]
    async with uow() as work:
        for one in agents:
            await work.agents.add(one)
        await work.commit()
    name = data.draw(st.sampled_from(made) | names) if by_name else None
    page = PageRequest(limit=3, order=order, name=name, q=q)
    kept = sorted((a for a in agents if page.keeps_name(a.name)), key=lambda a: (a.created_at, a.id))
    if order is Order.DESC:
        kept.reverse()
    seen: list[str] = []
    async with uow() as work:
        while True:
            found, total = await work.agents.list_page(org, PageRequest(3, len(seen), order, name, q))
            assert total == len(kept)
            if not found:
                break
            seen.extend(a.id for a in found)
    assert seen == [a.id for a in kept]
