"""Templates: the built-in ones and the organization's; create, list, get, patch, delete, instantiate."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from litestar import Controller, patch, post
from litestar.params import FromPath, JSONBody, QueryParameter
from litestar.types import Scope

from controlplane_domain.templates import usecases
from controlplane_domain.templates.entity import Template as DomainTemplate
from controlplane_domain.templates.entity import TemplateParameter as DomainParameter
from controlplane_domain.templates.entity import TemplateScope
from controlplane_http.area import HttpArea
from controlplane_http.crud import Listing, Read, Remove, Resource, routes
from controlplane_http.handlers import caller, errors
from controlplane_http.signatures import Query
from controlplane_http.templates import payloads
from controlplane_wire.agents import Agent
from controlplane_wire.base import to_wire
from controlplane_wire.configuration import given_fields
from controlplane_wire.teams import TeamWithAgentsResponse
from controlplane_wire.templates import (
    Template,
    TemplateCreate,
    TemplateInstantiate,
    TemplateList,
    TemplateParameter,
    TemplateUpdate,
)

ScopeFilter = Annotated[
    TemplateScope, QueryParameter(name="scope", description="the built-in templates, the organization's, or all")
]


def template_out(template: DomainTemplate) -> Template:
    return to_wire(template, Template, organization_id=None if template.builtin else template.organization_id)


def _max_bytes(scope: Scope) -> int:
    """The request body limit (`server.max_body_bytes`): an expanded body is held to it as a body sent directly."""
    limit: int = scope["app"].state["max_body_bytes"]
    return limit


def _parameters(parameters: list[TemplateParameter]) -> tuple[DomainParameter, ...]:
    return tuple(
        DomainParameter(name=p.name, description=p.description, required=p.required, default=p.default)
        for p in parameters
    )


@routes(
    Resource("template", "Template", Template, TemplateList, template_out),
    Listing(
        usecases.list_templates,
        named=True,
        after=(Query("template_scope", ScopeFilter, TemplateScope.ALL),),
        where=lambda template_scope: template_scope,
    ),
    Read(usecases.get_template),
    Remove(usecases.delete_template, force=False, codes=(404,)),
)
class TemplateController(Controller):
    path = "/api/v1/templates"
    tags = ["templates"]

    @post("/", operation_id="createTemplate", status_code=201, responses=errors(409, 415))
    async def create_template(self, data: JSONBody[TemplateCreate], scope: Scope) -> Template:
        ports, principal = caller(scope)
        command = usecases.CreateTemplate(
            name=data.name,
            kind=data.kind,
            description=data.description,
            parameters=_parameters(data.parameters),
            body=data.body,
        )
        template = await usecases.create_template(
            ports, principal.organization_id, command, payloads.check_body, payloads.candidates, _max_bytes(scope)
        )
        return template_out(template)

    @patch("/{template_id:str}", operation_id="updateTemplate", responses=errors(404, 409, 415))
    async def update_template(
        self, template_id: FromPath[str], data: JSONBody[TemplateUpdate], scope: Scope
    ) -> Template:
        ports, principal = caller(scope)
        changes = given_fields(data)
        if "parameters" in changes:
            changes["parameters"] = _parameters(changes["parameters"])
        command = usecases.UpdateTemplate(**changes)
        template = await usecases.update_template(
            ports,
            principal.organization_id,
            template_id,
            command,
            payloads.check_body,
            payloads.candidates,
            _max_bytes(scope),
        )
        return template_out(template)

    @post(
        "/{template_id:str}/instantiate",
        operation_id="instantiateTemplate",
        status_code=201,
        responses=errors(404, 409, 415),
        description="Create the agent or team the template describes, with the parameters' values: the answer "
        "and the errors of POST /api/v1/agents or /api/v1/teams with the substituted body.",
    )
    async def instantiate_template(
        self, template_id: FromPath[str], data: JSONBody[TemplateInstantiate], scope: Scope
    ) -> Agent | TeamWithAgentsResponse:
        ports, principal = caller(scope)
        organization_id = principal.organization_id
        command = usecases.Instantiate(parameters=data.parameters, name=data.name)
        limit = _max_bytes(scope)
        create = partial(payloads.create, ports, organization_id, max_bytes=limit)
        return await usecases.instantiate_template(ports, organization_id, template_id, command, create, limit)


AREA = HttpArea((TemplateController,), visible={"template_id": usecases.get_template})
