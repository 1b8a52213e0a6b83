"""Due items in turns between organizations (controlplane_domain/fairness.py), as the SQL stores order them."""

from __future__ import annotations

from controlplane_domain.fairness import in_turns, more_due


def test_every_organizations_earliest_comes_before_any_second() -> None:
    items = [("a", 1), ("a", 2), ("a", 3), ("a", 4), ("b", 9), ("c", 5), ("c", 6)]
    ordered = in_turns(items, lambda item: item[0], lambda item: item[1], limit=10, per_organization=10)
    assert ordered == [("a", 1), ("c", 5), ("b", 9), ("a", 2), ("c", 6), ("a", 3), ("a", 4)]


def test_at_most_so_many_of_one_organization_and_the_limit() -> None:
    items = [("a", n) for n in range(10)] + [("b", 100)]
    ordered = in_turns(items, lambda item: item[0], lambda item: item[1], limit=10, per_organization=3)
    assert ordered == [("a", 0), ("b", 100), ("a", 1), ("a", 2)]
    assert in_turns(items, lambda item: item[0], lambda item: item[1], limit=2, per_organization=3) == ordered[:2]


def test_a_round_may_have_left_items_when_full_or_at_an_organizations_most() -> None:
    assert more_due(["a", "b"], limit=2, per_organization=5)
    assert more_due(["a", "a", "b"], limit=10, per_organization=2)
    assert not more_due(["a", "b"], limit=10, per_organization=2)
    assert not more_due([], limit=10, per_organization=2)
