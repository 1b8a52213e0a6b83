"""Context graph wire types: nodes, edges, neighbourhoods and paths."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.context_graph.entity import MAX_LABELS, NAME, Direction
from controlplane_wire.base import OrganizationResource, Page, Request

Name = Annotated[
    str,
    Meta(
        pattern=f"^{NAME.pattern}$",
        max_length=64,
        description="a letter or digit, then up to 63 of letters, digits and _ . : / -",
    ),
]
Labels = Annotated[
    list[Name],
    Meta(
        max_length=MAX_LABELS, description=f"at most {MAX_LABELS}, each once", extra_json_schema={"uniqueItems": True}
    ),
]
Properties = Annotated[dict[str, Any], Meta(description="any JSON object, at most 16 KiB as compact JSON")]
NodeId = Annotated[str, Meta(min_length=1, max_length=64)]


class NodeCreate(Request, kw_only=True):
    labels: Labels = []
    properties: Properties = {}


class NodeUpdate(Request, kw_only=True):
    labels: Labels | UnsetType = UNSET
    properties: Properties | UnsetType = UNSET


class Node(OrganizationResource, kw_only=True):
    labels: list[str]
    properties: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class NodeList(Page[Node]):
    items: list[Node]


class EdgeCreate(Request, kw_only=True):
    type: Name
    source_id: NodeId
    target_id: NodeId
    properties: Properties = {}


class Edge(OrganizationResource, kw_only=True):
    type: str
    source_id: str
    target_id: str
    properties: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class EdgeList(Page[Edge]):
    items: list[Edge]


class Neighbor(Node, kw_only=True):
    """A node and its distance from the start (the least number of moves)."""

    depth: int


class Neighborhood(msgspec.Struct, kw_only=True):
    node_id: str
    depth: int
    direction: Direction
    edge_type: str | None
    limit: int
    nodes: list[Neighbor]
    edges: list[Edge]
    truncated: bool


class Path(msgspec.Struct, kw_only=True):
    source_id: str
    target_id: str
    max_depth: int
    direction: Direction
    edge_type: str | None
    found: bool
    length: int | None
    nodes: list[Node]
    edges: list[Edge]
