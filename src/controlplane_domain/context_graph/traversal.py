"""The shortest path a store answers, chosen among the steps that lie on one (whatever the store)."""

from __future__ import annotations

from collections.abc import Iterable

from controlplane_domain.context_graph.entity import Step


def choose_path(source_id: str, target_id: str, steps: Iterable[Step]) -> list[Step]:
    """The path from `source_id` to `target_id` that takes, at each move, the step of least edge id among `steps`,
    which must be every step lying on a shortest path (the `at`-th move of one); empty when they are none.

    Every store hands the same steps for the same graph, so every store answers the same path."""
    by_start: dict[tuple[str, int], Step] = {}
    for step in steps:
        key = (step.from_id, step.at)
        if key not in by_start or step.edge_id < by_start[key].edge_id:
            by_start[key] = step
    path: list[Step] = []
    at, node = 0, source_id
    while node != target_id:
        move = by_start.get((node, at))
        if move is None:
            return []
        path.append(move)
        at, node = at + 1, move.to_id
    return path
