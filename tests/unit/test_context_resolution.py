"""The merge of an execution's context layers (`resolve`) and the bounds of a context (`check_context`)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controlplane_domain.contexts.entity import NO_CONTEXT, Context, Knowledge, Layer, OwnedContext, OwnerType
from controlplane_domain.contexts.resolution import check_context, ordered, resolve
from controlplane_domain.errors import ValidationFailed

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def layer(owner_type: OwnerType, owner_id: str, joined: int | None = None, **fields: object) -> Layer:
    context = Context(**fields)  # type: ignore[arg-type]
    owned = OwnedContext(organization_id="o", owner_type=owner_type, owner_id=owner_id, context=context,
                         created_at=T0, updated_at=T0)  # fmt: skip
    return Layer(owned, None if joined is None else T0 + timedelta(seconds=joined))


def test_nothing_or_only_empty_layers_is_no_context() -> None:
    assert resolve([]) is NO_CONTEXT
    assert resolve([layer(OwnerType.AGENT, "a"), layer(OwnerType.PROJECT, "p", 1)]) is NO_CONTEXT


def test_layers_merge_projects_then_environment_team_agent() -> None:
    layers = [
        layer(OwnerType.AGENT, "a", instructions="agent", variables={"X": "agent"}, storage_paths=("a/", "s/")),
        layer(OwnerType.PROJECT, "late", 9, variables={"X": "late", "L": "1"}),
        layer(OwnerType.TEAM, "t", knowledge=(Knowledge("k", uri="https://t"),)),
        layer(OwnerType.ENVIRONMENT, "e", instructions="environment", variables={"X": "environment"}),
        layer(
            OwnerType.PROJECT,
            "early",
            1,
            instructions="early",
            knowledge=(Knowledge("k", text="early"), Knowledge("j", text="j")),
            storage_paths=("s/",),
        ),
        layer(OwnerType.PROJECT, "empty", 5),
    ]
    resolved = resolve(layers)
    assert resolved.context.instructions == "early\n\nenvironment\n\nagent"
    assert resolved.context.variables == {"X": "agent", "L": "1"}
    assert resolved.context.knowledge == (Knowledge("k", uri="https://t"), Knowledge("j", text="j"))
    assert resolved.context.storage_paths == ("s/", "a/")
    assert [(s.owner_type, s.owner_id) for s in resolved.sources] == [
        (OwnerType.PROJECT, "early"), (OwnerType.PROJECT, "late"), (OwnerType.ENVIRONMENT, "e"),
        (OwnerType.TEAM, "t"), (OwnerType.AGENT, "a"),
    ]  # fmt: skip


def test_a_project_met_twice_counts_once_at_its_earliest_join() -> None:
    layers = [layer(OwnerType.PROJECT, "p", 10, variables={"V": "p"}), layer(OwnerType.PROJECT, "q", 5,
              variables={"V": "q"}), layer(OwnerType.PROJECT, "p", 1, variables={"V": "p"})]  # fmt: skip
    assert [entry.joined for entry in ordered(layers)] == [T0 + timedelta(seconds=1), T0 + timedelta(seconds=5)]
    assert resolve(layers).context.variables == {"V": "q"}


owner_types = st.sampled_from(list(OwnerType))
contexts = st.builds(
    Context,
    instructions=st.text(max_size=3),
    variables=st.dictionaries(st.sampled_from("ABC"), st.text(max_size=2), max_size=3),
    storage_paths=st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=3).map(tuple),
)


@given(st.lists(st.tuples(owner_types, st.integers(0, 3), contexts), max_size=6, unique_by=lambda t: (t[0], t[1])),
       st.randoms())  # fmt: skip
def test_resolution_ignores_the_order_layers_are_read_in(
    drawn: list[tuple[OwnerType, int, Context]], shuffler: random.Random
) -> None:
    layers = [
        Layer(OwnedContext(organization_id="o", owner_type=t, owner_id=f"{t}-{n}", context=c, created_at=T0,
                           updated_at=T0), T0 + timedelta(seconds=n) if t is OwnerType.PROJECT else None)
        for t, n, c in drawn
    ]  # fmt: skip
    shuffled = list(layers)
    shuffler.shuffle(shuffled)
    assert resolve(shuffled) == resolve(layers)
    merged: dict[str, str] = {}
    for entry in ordered(layers):
        merged.update(entry.owned.context.variables)
    assert dict(resolve(layers).context.variables) == merged
    assert set(resolve(layers).context.storage_paths) == {p for _, _, c in drawn for p in c.storage_paths}


@pytest.mark.parametrize(
    ("context", "field"),
    [
        (Context(instructions="x" * 65_537), "instructions"),
        (Context(knowledge=(Knowledge("k"),)), "knowledge.0"),
        (Context(knowledge=(Knowledge("k", text="t", uri="https://u"),)), "knowledge.0"),
        (Context(knowledge=(Knowledge(" ", text="t"),)), "knowledge.0.name"),
        (Context(knowledge=(Knowledge("k", text="a"), Knowledge("k", text="b"))), "knowledge.1.name"),
        (Context(knowledge=(Knowledge("k", uri="relative/path"),)), "knowledge.0.uri"),
        (Context(knowledge=tuple(Knowledge(f"k{i}", text="t") for i in range(101))), "knowledge"),
        (Context(variables={"9LIVES": "v"}), "variables.9LIVES"),
        (Context(variables={"V": "x" * 8_193}), "variables.V"),
        (Context(variables={f"V{i}": "v" for i in range(201)}), "variables"),
        (Context(storage_paths=("a/../b",)), "storage_paths.0"),
        (Context(storage_paths=("a", "a")), "storage_paths.1"),
        (Context(storage_paths=("nul\x00",)), "storage_paths.0"),
    ],
)
def test_bad_contexts_name_their_field(context: Context, field: str) -> None:
    with pytest.raises(ValidationFailed) as raised:
        check_context(context)
    assert raised.value.field == field


def test_a_full_context_within_bounds_passes() -> None:
    check_context(
        Context(
            instructions="x" * 65_536,
            knowledge=tuple(Knowledge(f"k{i}", uri=f"s3://bucket/{i}") for i in range(100)),
            variables={f"V_{i}": "v" for i in range(200)},
            storage_paths=tuple(f"dir/{i}" for i in range(100)),
        )
    )
