"""The context graph: nodes and edges (create, list, get, patch, delete), a node's neighbours, shortest paths."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import parse_qsl

from litestar import Controller, get
from litestar.openapi.spec import OpenAPIType, Schema
from litestar.params import FromPath, FromQuery, QueryParameter
from litestar.types import Scope

from controlplane_domain.context_graph import usecases
from controlplane_domain.context_graph.entity import (
    DEFAULT_RESULT_LIMIT,
    MAX_NEIGHBOR_DEPTH,
    MAX_PATH_DEPTH,
    MAX_RESULT_LIMIT,
    NAME,
    Direction,
    PropertyFilter,
    Reached,
)
from controlplane_domain.context_graph.entity import GraphEdge as DomainEdge
from controlplane_domain.context_graph.entity import GraphNode as DomainNode
from controlplane_domain.errors import ValidationFailed
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, routes
from controlplane_http.handlers import Limit, Offset, OldestFirst, caller, errors, page_of, page_request
from controlplane_http.security import QUERY_PREFIXES
from controlplane_http.signatures import Query, optional
from controlplane_wire.base import to_wire
from controlplane_wire.configuration import given_fields
from controlplane_wire.context_graph import (
    Edge,
    EdgeCreate,
    EdgeList,
    Neighbor,
    Neighborhood,
    Node,
    NodeCreate,
    NodeList,
    NodeUpdate,
    Path,
)

PROPERTY = "property."
Depth = Annotated[
    int, QueryParameter(ge=1, le=MAX_NEIGHBOR_DEPTH, description=f"moves from the node, 1 to {MAX_NEIGHBOR_DEPTH}")
]
MaxDepth = Annotated[
    int, QueryParameter(ge=1, le=MAX_PATH_DEPTH, description=f"the longest path sought (1 to {MAX_PATH_DEPTH} edges)")
]
ResultLimit = Annotated[
    int,
    QueryParameter(
        ge=1, le=MAX_RESULT_LIMIT, description=f"at most this many nodes and this many edges (1 to {MAX_RESULT_LIMIT})"
    ),
]
# What the use cases check a label or edge type query for (documented only: their checks say what is wrong).
NAME_SCHEMA = {"pattern": f"^{NAME.pattern}$", "maxLength": 64}
EdgeType = Annotated[
    str | None,
    QueryParameter(description="only edges of this type (every type when absent)", schema_extra=NAME_SCHEMA),
]
OfType = Annotated[str | None, QueryParameter(name="type", description="only edges of this type")]
Walk = Annotated[Direction, QueryParameter(description="out: source to target; in: target to source; both: either")]


def node_out(node: DomainNode) -> Node:
    return to_wire(node, Node)


def neighbor_out(reached: Reached) -> Neighbor:
    return to_wire(reached.node, Neighbor, depth=reached.depth)


def edge_out(edge: DomainEdge) -> Edge:
    return to_wire(edge, Edge)


def property_filters(scope: Scope) -> tuple[PropertyFilter, ...]:
    """The `property.KEY=VALUE` parameters of the query, in order."""
    query = scope.get("query_string", b"").decode("utf-8", "replace")
    found = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name.startswith(PROPERTY):
            if name == PROPERTY:
                raise ValidationFailed(name, f"name a property: {PROPERTY}KEY=VALUE", "query")
            found.append(PropertyFilter(name[len(PROPERTY) :], value))
    return tuple(found)


def _update_node(data: NodeUpdate) -> usecases.UpdateNode:
    given = given_fields(data)
    if "labels" in given:
        given["labels"] = tuple(given["labels"])
    return usecases.UpdateNode(**given)


def _edge_filter(*, edge_type: str | None, source_id: str | None, target_id: str | None) -> usecases.EdgeFilter:
    return usecases.EdgeFilter(type=edge_type, source_id=source_id, target_id=target_id)


@routes(
    Resource("node", "GraphNode", Node, NodeList, node_out, at="/nodes"),
    Create(
        usecases.create_node,
        body=NodeCreate,
        command=lambda data: usecases.CreateNode(labels=tuple(data.labels), properties=data.properties),
        codes=(415,),
        doc="Labels: at most 32, each once; properties: a JSON object of at most 16 KiB.",
    ),
    Read(usecases.get_node),
    Update(
        usecases.update_node,
        body=NodeUpdate,
        command=_update_node,
        codes=(404, 415),
        doc="Replaces the labels, the properties, or both (each whole).",
    ),
    Remove(usecases.delete_node, force=False, codes=(404,), doc="Deletes the node and every edge from or to it."),
)
@routes(
    Resource("edge", "GraphEdge", Edge, EdgeList, edge_out, at="/edges"),
    Create(
        usecases.create_edge,
        body=EdgeCreate,
        command=lambda data: usecases.CreateEdge(
            type=data.type, source_id=data.source_id, target_id=data.target_id, properties=data.properties
        ),
        codes=(409, 415),
        doc="""From `source_id` to `target_id`, both nodes of the organization (the same one: a self-loop); 422 at
        the end that is not; 409 when an end was deleted meanwhile.""",
    ),
    Listing(
        usecases.list_edges,
        before=(
            Query(
                "edge_type", Annotated[str | None, QueryParameter(name="type", description="only edges of this type")]
            ),
            *optional(source_id=str, target_id=str),
        ),
        where=_edge_filter,
    ),
    Read(usecases.get_edge),
    Remove(usecases.delete_edge, force=False, codes=(404,)),
)
class ContextGraphController(Controller):
    path = "/api/v1/context-graph"
    tags = ["context-graph"]

    @get("/nodes", operation_id="listGraphNodes", responses=errors(), opt={QUERY_PREFIXES: (PROPERTY,)})
    async def list_nodes(
        self,
        scope: Scope,
        # (an array, not "an array or null": Schemathesis takes `label=0.5`, a one-item array on the wire, for a
        # value outside `oneOf: [array, null]` and expects it refused)
        label: Annotated[
            tuple[str, ...],
            QueryParameter(
                description="only nodes with this label (repeat: all of them)",
                schema_extra={"items": Schema(type=OpenAPIType.STRING, pattern=NAME_SCHEMA["pattern"], max_length=64)},
            ),
        ] = (),
        limit: Limit = 50,
        offset: Offset = 0,
        order: OldestFirst = None,
    ) -> NodeList:
        """Also `property.KEY=VALUE` (repeatable, up to 16; all must hold): the node's top-level property KEY is a
        JSON scalar whose string form is VALUE: a string equal to VALUE; a number equal to VALUE read as a JSON
        number (`3`, `3.0` and `3e0` match 3); `true`, `false` or `null` for those words. Objects and arrays
        never match."""
        ports, principal = caller(scope)
        where = usecases.NodeFilter(labels=tuple(label), properties=property_filters(scope))
        page = await usecases.list_nodes(ports, principal.organization_id, page_request(limit, offset, order), where)
        return page_of(NodeList, page, node_out)

    @get("/nodes/{node_id:str}/neighbors", operation_id="getGraphNodeNeighbors", responses=errors(404))
    async def neighbors(
        self,
        node_id: FromPath[str],
        scope: Scope,
        depth: Depth = 1,
        direction: Walk = Direction.BOTH,
        edge_type: EdgeType = None,
        limit: ResultLimit = DEFAULT_RESULT_LIMIT,
    ) -> Neighborhood:
        """The nodes within `depth` moves (each once, at its least distance; cycles end where a node is found
        again), nearest first then by (created_at, id); the edges of the type between any two of them and the
        node, in (created_at, id) order. `truncated` when either list was cut at `limit`. A walk that would reach
        more than 5,000 nodes (`max_walk_nodes`, a node counted once a distance) stops there: 422 on `depth`."""
        ports, principal = caller(scope)
        query = usecases.NeighborQuery(depth=depth, direction=direction, edge_type=edge_type, limit=limit)
        found = await usecases.neighbors(ports, principal.organization_id, node_id, query)
        return Neighborhood(
            node_id=node_id,
            depth=depth,
            direction=direction,
            edge_type=edge_type,
            limit=limit,
            nodes=[neighbor_out(item) for item in found.nodes],
            edges=[edge_out(edge) for edge in found.edges],
            truncated=found.truncated,
        )

    @get("/paths", operation_id="findGraphPath", responses=errors(404))
    async def find_path(
        self,
        scope: Scope,
        source_id: FromQuery[str],
        target_id: FromQuery[str],
        max_depth: MaxDepth = MAX_PATH_DEPTH,
        direction: Walk = Direction.OUT,
        edge_type: EdgeType = None,
    ) -> Path:
        """A shortest path (nodes and edges in order) of at most `max_depth` edges; of several, the one taking at
        each move the edge of least id. `found: false` (200, empty lists) when there is none that short; 404 when
        the source or the target is no node of the organization. A walk from the source that would reach more than
        5,000 nodes within `max_depth` (`max_walk_nodes`) stops there: 422 on `max_depth`."""
        ports, principal = caller(scope)
        query = usecases.PathQuery(
            source_id=source_id, target_id=target_id, max_depth=max_depth, direction=direction, edge_type=edge_type
        )
        path = await usecases.shortest_path(ports, principal.organization_id, query)
        return Path(
            source_id=source_id,
            target_id=target_id,
            max_depth=max_depth,
            direction=direction,
            edge_type=edge_type,
            found=path is not None,
            length=None if path is None else len(path.edges),
            nodes=[] if path is None else [node_out(node) for node in path.nodes],
            edges=[] if path is None else [edge_out(edge) for edge in path.edges],
        )


AREA = HttpArea((ContextGraphController,), visible={"node_id": usecases.get_node, "edge_id": usecases.get_edge})
