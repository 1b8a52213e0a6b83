"""An area's routes declared with `crud.routes` are the routes written by hand: the same OpenAPI document (operation
ids, summaries, descriptions, parameters in their order, bodies, responses, headers) and the same handler names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
from litestar import Controller, Litestar, Response, delete, get, patch, post
from litestar.openapi import OpenAPIConfig
from litestar.params import FromPath, JSONBody
from litestar.types import Scope
from msgspec import UNSET, UnsetType

from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.references import Dangling
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, as_command, given_as, routes
from controlplane_http.handlers import (
    DANGLING,
    Force,
    Limit,
    NameFilter,
    NameQuery,
    Offset,
    OldestFirst,
    ProjectFilter,
    errors,
)
from controlplane_http.signatures import Query
from controlplane_wire.base import Request


class Thing(msgspec.Struct, kw_only=True):
    id: str
    name: str


class ThingList(msgspec.Struct, kw_only=True):
    items: list[Thing]
    total: int
    limit: int
    offset: int


class ThingCreate(Request, kw_only=True):
    name: str


class ThingUpdate(Request, kw_only=True):
    name: str | UnsetType = UNSET


@dataclass(frozen=True)
class CreateThing:
    name: str


@dataclass(frozen=True)
class UpdateThing:
    name: str | None = None


async def create_thing(ports: Any, organization_id: str, command: CreateThing) -> Thing:
    return Thing(id="1", name=command.name)


async def list_things(ports: Any, organization_id: str, page: PageRequest, *, project_id: str | None) -> Page[Thing]:
    return Page(items=[], total=0, limit=page.limit, offset=page.offset)


async def get_thing(ports: Any, organization_id: str, thing_id: str) -> Thing:
    return Thing(id=thing_id, name="a")


async def update_thing(ports: Any, organization_id: str, thing_id: str, command: UpdateThing) -> Thing:
    return Thing(id=thing_id, name=command.name or "a")


async def delete_thing(ports: Any, organization_id: str, thing_id: str, *, force: bool = False) -> Dangling:
    return Dangling()


def written() -> type[Controller]:
    class ThingController(Controller):
        path = "/api/v1/things"
        tags = ["things"]

        @post("/", operation_id="createThing", status_code=201, responses=errors(409, 415))
        async def create_thing(self, data: JSONBody[ThingCreate], scope: Scope) -> Thing:
            raise NotImplementedError

        @get("/", operation_id="listThings", responses=errors())
        async def list_things(
            self,
            scope: Scope,
            limit: Limit = 50,
            offset: Offset = 0,
            order: OldestFirst = None,
            name: NameFilter = None,
            q: NameQuery = None,
            project_id: ProjectFilter = None,
        ) -> ThingList:
            raise NotImplementedError

        @get("/{thing_id:str}", operation_id="getThing", responses=errors(404))
        async def get_thing(self, thing_id: FromPath[str], scope: Scope) -> Thing:
            """One thing."""
            raise NotImplementedError

        @patch("/{thing_id:str}", operation_id="updateThing", responses=errors(404, 409, 415))
        async def update_thing(self, thing_id: FromPath[str], data: JSONBody[ThingUpdate], scope: Scope) -> Thing:
            raise NotImplementedError

        @delete(
            "/{thing_id:str}",
            operation_id="deleteThing",
            status_code=204,
            responses=errors(404, 409),
            response_headers=DANGLING,
        )
        async def delete_thing(self, thing_id: FromPath[str], scope: Scope, force: Force = False) -> Response[None]:
            raise NotImplementedError

    return ThingController


def declared() -> type[Controller]:
    @routes(
        Resource("thing", "Thing", Thing, ThingList),
        Create(create_thing, body=ThingCreate, command=as_command(CreateThing)),
        Listing(list_things, named=True, after=(Query("project_id", ProjectFilter),)),
        Read(get_thing, doc="One thing."),
        Update(update_thing, body=ThingUpdate, command=given_as(UpdateThing)),
        Remove(delete_thing),
    )
    class ThingController(Controller):
        path = "/api/v1/things"
        tags = ["things"]

    return ThingController


def document(controller: type[Controller]) -> dict[str, Any]:
    config = OpenAPIConfig(title="things", version="1", use_handler_docstrings=True)
    return Litestar([controller], openapi_config=config).openapi_schema.to_schema()


def test_declared_routes_are_documented_as_written() -> None:
    written_document, declared_document = document(written()), document(declared())
    assert list(declared_document["paths"]) == list(written_document["paths"])
    assert declared_document == written_document


def test_declared_handlers_are_named_as_written() -> None:
    controller = declared()
    names = ("create_thing", "list_things", "get_thing", "update_thing", "delete_thing")
    assert all(getattr(controller, name).handler_name == name for name in names)
    assert getattr(controller, "get_thing").fn.__qualname__ == f"{controller.__qualname__}.get_thing"  # noqa: B009
