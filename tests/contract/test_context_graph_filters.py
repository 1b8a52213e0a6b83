"""`property.KEY=VALUE` on every store is the rule `PropertyFilter` states (JSON scalar equality with its string
form), for random scalars and random query values: strings, numbers written many ways, words."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controlplane_domain.context_graph.entity import GraphNode, PropertyFilter
from controlplane_domain.paging import PageRequest
from tests.contract.conftest import UowFactory

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=8)
numbers = st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [0, 3, 3.0, -0.0, 0.1, 1e-7, 2.5, 1e300])  # fmt: skip
scalars = st.none() | st.booleans() | numbers | text | st.sampled_from(["3", "true", "null", "3.0", ""])
containers = st.lists(numbers, max_size=2) | st.dictionaries(text, numbers, max_size=2)
spellings = st.sampled_from(["3", "3.0", "3e0", "30e-1", "-0", "0.0", "0.1", "1e-7", "1E-7", "2.5", "true", "false",
                             "null", "1e300", "01", "", " 3", "1e999"])  # fmt: skip


def written(value: Any) -> str:
    """Ways a client may write the value: its JSON text, or Python's."""
    return json.dumps(value) if not isinstance(value, str) else value


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(scalars | containers, min_size=1, max_size=6), data=st.data())
async def test_property_filters_follow_the_rule_on_every_store(
    uow: UowFactory, values: list[Any], data: st.DataObject
) -> None:
    org = f"org-{uuid.uuid4().hex}"
    nodes = [
        GraphNode(id=f"{org}-n{n}", organization_id=org, labels=(), properties={"v": value, "other": n},
                  created_at=T0 + timedelta(seconds=n), updated_at=T0 + timedelta(seconds=n))
        for n, value in enumerate(values)
    ]  # fmt: skip
    nodes.append(GraphNode(id=f"{org}-none", organization_id=org, labels=(), properties={}, created_at=T0 +
                           timedelta(seconds=99), updated_at=T0 + timedelta(seconds=99)))  # fmt: skip
    async with uow() as work:
        for node in nodes:
            await work.context_graph.add(node)
        await work.commit()
    async with uow() as work:  # what the store kept (Postgres keeps jsonb's reading of a number)
        stored = [await work.context_graph.get(org, node.id) for node in nodes]
    wanted = PropertyFilter("v", data.draw(spellings | text | st.sampled_from(values).map(written)))
    async with uow() as work:
        found, total = await work.context_graph.list_page(org, PageRequest(limit=200), properties=[wanted])
    assert [node.id for node in found] == [node.id for node in stored if node and wanted.matches(node.properties)]
    assert total == len(found)
