"""Context graph use cases: nodes and edges (create, read, change, delete, list) and the walks over them."""

from __future__ import annotations

from dataclasses import dataclass, field

from controlplane_domain import crud
from controlplane_domain.config import JSONObject
from controlplane_domain.context_graph.entity import (
    DEFAULT_RESULT_LIMIT,
    MAX_LABELS,
    MAX_NEIGHBOR_DEPTH,
    MAX_PATH_DEPTH,
    MAX_PROPERTIES_BYTES,
    MAX_PROPERTY_FILTERS,
    MAX_RESULT_LIMIT,
    MAX_WALK_NODES,
    NAME,
    Direction,
    GraphEdge,
    GraphNode,
    GraphPath,
    Neighborhood,
    PropertyFilter,
    WalkTooLarge,
    WalkTooLong,
    properties_size,
)
from controlplane_domain.context_graph.traversal import choose_path
from controlplane_domain.crud import Area
from controlplane_domain.errors import NotFound, ValidationFailed, found
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateNode:
    labels: tuple[str, ...] = ()
    properties: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateNode:
    labels: tuple[str, ...] | Unset = UNSET
    properties: JSONObject | Unset = UNSET


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateEdge:
    type: str
    source_id: str
    target_id: str
    properties: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeFilter:
    labels: tuple[str, ...] = ()
    properties: tuple[PropertyFilter, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class EdgeFilter:
    type: str | None = None
    source_id: str | None = None
    target_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NeighborQuery:
    depth: int = 1
    direction: Direction = Direction.BOTH
    edge_type: str | None = None
    limit: int = DEFAULT_RESULT_LIMIT


@dataclass(frozen=True, slots=True, kw_only=True)
class PathQuery:
    source_id: str
    target_id: str
    max_depth: int = MAX_PATH_DEPTH
    direction: Direction = Direction.OUT
    edge_type: str | None = None


def _check_name(field_name: str, value: str, location: str = "body") -> None:
    if NAME.fullmatch(value) is None:
        raise ValidationFailed(field_name, "must be 1 to 64 of letters, digits and _ . : / - (not first)", location)


def _check_properties(properties: JSONObject) -> None:
    if properties_size(properties) > MAX_PROPERTIES_BYTES:
        raise ValidationFailed("properties", f"must be at most {MAX_PROPERTIES_BYTES} bytes as JSON")


def _check_node(node: GraphNode) -> None:
    if len(node.labels) > MAX_LABELS:
        raise ValidationFailed("labels", f"must be at most {MAX_LABELS}")
    for index, label in enumerate(node.labels):
        _check_name(f"labels.{index}", label)
    if len(set(node.labels)) != len(node.labels):
        raise ValidationFailed("labels", "must not repeat a label")
    _check_properties(node.properties)


def _check_between(field_name: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise ValidationFailed(field_name, f"must be between {low} and {high}", "query")


def _too_large(field_name: str, refused: WalkTooLarge) -> ValidationFailed:
    """422 on the walk's depth, naming the bound (`details.bound`, `details.limit`)."""
    if isinstance(refused, WalkTooLong):
        bound, limit, what = "max_walk_ms", refused.limit, f"takes more than {refused.limit} ms"
    else:
        bound, limit, what = "max_walk_nodes", MAX_WALK_NODES, f"reaches more than {MAX_WALK_NODES} nodes"
    error = ValidationFailed(field_name, f"the walk {what} ({bound}): ask for fewer moves or one edge_type", "query")
    error.details.update(bound=bound, limit=limit)
    return error


NODES = Area("node", lambda uow: uow.context_graph)


async def require_node(uow: UnitOfWork, organization_id: str, node_id: str, *, lock: bool = False) -> GraphNode:
    """The node of this organization, or NotFound."""
    return await crud.require(NODES, uow, organization_id, node_id, lock=lock)


@retry_transient
async def create_node(ports: Ports, organization_id: str, command: CreateNode) -> GraphNode:
    node = crud.new(GraphNode, ports, organization_id, command)
    _check_node(node)
    return await crud.add(NODES, ports, node)


async def get_node(ports: Ports, organization_id: str, node_id: str) -> GraphNode:
    return await crud.get(NODES, ports, organization_id, node_id)


async def list_nodes(ports: Ports, organization_id: str, page: PageRequest, where: NodeFilter) -> Page[GraphNode]:
    if len(where.properties) > MAX_PROPERTY_FILTERS:
        raise ValidationFailed("property", f"at most {MAX_PROPERTY_FILTERS} property filters", "query")
    for label in where.labels:
        _check_name("label", label, "query")
    async with ports.read() as uow:
        items, total = await uow.context_graph.list_page(
            organization_id, page, labels=where.labels, properties=where.properties
        )
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


@retry_transient
async def update_node(ports: Ports, organization_id: str, node_id: str, command: UpdateNode) -> GraphNode:
    return await crud.patch(NODES, ports, organization_id, node_id, command, _check_node)


@retry_transient
async def delete_node(ports: Ports, organization_id: str, node_id: str) -> None:
    """Delete the node and its edges, in one transaction."""
    await crud.delete(NODES, ports, organization_id, node_id)


@retry_transient
async def create_edge(ports: Ports, organization_id: str, command: CreateEdge) -> GraphEdge:
    """An edge between two nodes of the organization (the same node twice is a self-loop); 422 naming the end
    that is no node of the organization (another organization's node is no node)."""
    edge = crud.new(GraphEdge, ports, organization_id, command)
    _check_name("type", edge.type)
    _check_properties(edge.properties)
    async with ports.uow() as uow:
        found = await uow.context_graph.nodes(organization_id, [edge.source_id, edge.target_id])
        for name, node_id in (("source_id", edge.source_id), ("target_id", edge.target_id)):
            if node_id not in found:
                raise ValidationFailed(name, f"no node '{node_id}' in the organization")
        await uow.context_graph.add_edge(edge)
        await uow.commit()
    return edge


async def get_edge(ports: Ports, organization_id: str, edge_id: str) -> GraphEdge:
    async with ports.read() as uow:
        edge = await uow.context_graph.get_edge(organization_id, edge_id)
    return found(edge, "edge", edge_id)


async def list_edges(ports: Ports, organization_id: str, page: PageRequest, where: EdgeFilter) -> Page[GraphEdge]:
    async with ports.read() as uow:
        items, total = await uow.context_graph.edge_page(
            organization_id, page, type=where.type, source_id=where.source_id, target_id=where.target_id
        )
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


@retry_transient
async def delete_edge(ports: Ports, organization_id: str, edge_id: str) -> None:
    async with ports.uow() as uow:
        if await uow.context_graph.get_edge(organization_id, edge_id) is None:
            raise NotFound("edge", edge_id)
        await uow.context_graph.delete_edge(organization_id, edge_id)
        await uow.commit()


async def neighbors(ports: Ports, organization_id: str, node_id: str, query: NeighborQuery) -> Neighborhood:
    """The nodes within `depth` moves of the node (each once, at its least distance), and the edges among them;
    422 on `depth` when the walk reaches more than MAX_WALK_NODES nodes."""
    _check_between("depth", query.depth, 1, MAX_NEIGHBOR_DEPTH)
    _check_between("limit", query.limit, 1, MAX_RESULT_LIMIT)
    if query.edge_type is not None:
        _check_name("edge_type", query.edge_type, "query")
    async with ports.read() as uow:
        await require_node(uow, organization_id, node_id)
        try:
            return await uow.context_graph.neighbors(
                organization_id,
                node_id,
                depth=query.depth,
                direction=query.direction,
                edge_type=query.edge_type,
                limit=query.limit,
                max_nodes=MAX_WALK_NODES,
            )
        except WalkTooLarge as refused:
            raise _too_large("depth", refused) from None


async def shortest_path(ports: Ports, organization_id: str, query: PathQuery) -> GraphPath | None:
    """A shortest path from source to target within `max_depth` moves (the same one on every store: at each move
    the edge of least id that keeps it shortest); None when there is none that short."""
    _check_between("max_depth", query.max_depth, 1, MAX_PATH_DEPTH)
    if query.edge_type is not None:
        _check_name("edge_type", query.edge_type, "query")
    async with ports.read() as uow:
        await require_node(uow, organization_id, query.source_id)
        await require_node(uow, organization_id, query.target_id)
        try:
            steps = await uow.context_graph.path_steps(
                organization_id,
                query.source_id,
                query.target_id,
                max_depth=query.max_depth,
                direction=query.direction,
                edge_type=query.edge_type,
                max_nodes=MAX_WALK_NODES,
            )
        except WalkTooLarge as refused:
            raise _too_large("max_depth", refused) from None
        if steps is None:
            return None
        path = choose_path(query.source_id, query.target_id, steps)
        node_ids = [query.source_id, *(step.to_id for step in path)]
        nodes = await uow.context_graph.nodes(organization_id, node_ids)
        edges = await uow.context_graph.edges(organization_id, [step.edge_id for step in path])
    return GraphPath(nodes=[nodes[node_id] for node_id in node_ids], edges=[edges[step.edge_id] for step in path])
