"""Nodes and edges of an organization's context graph, the answers of its walks, and their bounds."""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.config import JSONObject

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}")
"""A label or an edge type: a letter or digit, then up to 63 of letters, digits and `_ . : / -`."""
MAX_LABELS = 32
MAX_PROPERTIES_BYTES = 16 * 1024
"""The properties of a node or an edge, as compact UTF-8 JSON."""
MAX_NEIGHBOR_DEPTH = 3
MAX_PATH_DEPTH = 6
DEFAULT_RESULT_LIMIT = 100
MAX_RESULT_LIMIT = 1000
MAX_PROPERTY_FILTERS = 16
MAX_WALK_NODES = 5_000
"""`max_walk_nodes`: the nodes a walk may reach (a node reached at several distances counts once a distance: the
stores walk level by level); past it the walk stops and the request is 422 naming this bound. A path reads at
most three walks of this many: the walk from its source, and the shortest paths' nodes forward and backward."""
MAX_WALK_MS = 200
"""`max_walk_ms`: the time one statement of a walk may take where the store runs it in the server's own process (the
CPU time it takes there, in a worker thread: never the event loop's). Under `max_walk_nodes` a walk's time grows
with the edges of the nodes it reaches: a dense graph reaches few nodes through many edges. Past it the walk stops
and the request is 422 naming this bound, at once rather than at the statement timeout. It leaves room for a walk
of `max_walk_nodes` nodes along one edge each, which meets the node bound first (docs/context-graph.md)."""
MAX_WALK_MS_OFF_LOOP = 250
"""`max_walk_ms` where the walk runs on a database server (the statement's time there)."""


class WalkTooLarge(Exception):
    """A store's walk reached more than `MAX_WALK_NODES` nodes and stopped (the use case answers 422)."""


class WalkTooLong(WalkTooLarge):
    """A store's walk ran one statement past its time (`MAX_WALK_MS`, or `MAX_WALK_MS_OFF_LOOP`: `limit`) and was
    stopped (the use case answers 422)."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


class Direction(enum.StrEnum):
    """Which way a walk follows an edge: source to target (`out`), target to source (`in`), or either."""

    OUT = "out"
    IN = "in"
    BOTH = "both"

    def reverse(self) -> Direction:
        return {Direction.OUT: Direction.IN, Direction.IN: Direction.OUT}.get(self, Direction.BOTH)


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphNode:
    audited: ClassVar[Audited] = Audited("graph_node")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    labels: tuple[str, ...]
    properties: JSONObject
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphEdge:
    """A directed, typed edge from `source_id` to `target_id` (both nodes of the organization; may be the same)."""

    audited: ClassVar[Audited] = Audited("graph_edge")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    type: str
    source_id: str
    target_id: str
    properties: JSONObject
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Step:
    """A move along an edge, from `from_id` to `to_id`, as the `at`-th move (0-based) of a shortest path."""

    from_id: str
    to_id: str
    edge_id: str
    at: int


@dataclass(frozen=True, slots=True)
class Reached:
    """A node a walk reached, and its distance from the start."""

    node: GraphNode
    depth: int


@dataclass(frozen=True, slots=True)
class Neighborhood:
    """The nodes within the depth (nearest first), the edges among them and the start, and whether either list
    was cut at the limit."""

    nodes: list[Reached]
    edges: list[GraphEdge]
    truncated: bool


@dataclass(frozen=True, slots=True)
class GraphPath:
    """A shortest path: its nodes and edges in order (one node and no edge from a node to itself)."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]


@dataclass(frozen=True, slots=True)
class PropertyFilter:
    """`property.KEY=VALUE`: the top-level property KEY is a JSON scalar whose string form is VALUE.

    A string matches itself; a number matches VALUE when VALUE is a JSON number of the same value (`3`, `3.0`
    and `3e0` all match 3); `true`, `false` and `null` match the word; objects and arrays never match."""

    key: str
    value: str

    @property
    def number(self) -> int | float | None:
        """VALUE as a number when it is a JSON number of at most 64 characters between 1e-300 and 1e300 in size
        (or 0): an int when it has no fraction or exponent. Any other VALUE only matches strings."""
        if len(self.value) > 64 or NUMBER.fullmatch(self.value) is None:
            return None
        exact = Decimal(self.value)
        if exact and not -300 <= exact.adjusted() <= 300:
            return None
        return int(self.value) if INTEGER.fullmatch(self.value) else float(self.value)

    @property
    def word(self) -> str | None:
        """VALUE when it is `true`, `false` or `null` (the JSON type of that name matches)."""
        return self.value if self.value in ("true", "false", "null") else None

    def matches(self, properties: JSONObject) -> bool:
        if self.key not in properties:
            return False
        value: Any = properties[self.key]
        if isinstance(value, str):
            return value == self.value
        if isinstance(value, bool) or value is None:
            return json.dumps(value) == self.value
        number = self.number
        if number is None:
            return False
        if isinstance(value, int):  # exactly, as a decimal number compares (which reads back as an int)
            return Decimal(value) == self.exact
        return isinstance(value, float) and value == number

    @property
    def exact(self) -> Decimal | None:
        """VALUE as the number it compares to, exactly: an int's digits, a float's shortest repr."""
        number = self.number
        if number is None:
            return None
        return Decimal(repr(number)) if isinstance(number, float) else Decimal(number)


NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")


def properties_size(properties: JSONObject) -> int:
    """The properties' size as compact UTF-8 JSON."""
    return len(json.dumps(properties, separators=(",", ":"), ensure_ascii=False).encode())
