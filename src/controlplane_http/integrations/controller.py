"""Integration templates (the built-in kinds) and integrations: create, list, get, patch, delete."""

from __future__ import annotations

from litestar import Controller, Response, delete, get, patch, post
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.integrations import catalog, usecases
from controlplane_domain.integrations.entity import Integration as DomainIntegration
from controlplane_http.handlers import (
    DANGLING,
    Force,
    Limit,
    Offset,
    OldestFirst,
    caller,
    deleted,
    errors,
    page_of,
    page_request,
)
from controlplane_wire.configuration import given_fields
from controlplane_wire.integrations import (
    Integration,
    IntegrationCreate,
    IntegrationList,
    IntegrationTemplate,
    IntegrationTemplateList,
    IntegrationUpdate,
    TemplateEnvVar,
)


def template_out(template: catalog.IntegrationTemplate) -> IntegrationTemplate:
    return IntegrationTemplate(
        kind=template.kind,
        name=template.name,
        description=template.description,
        configuration_schema=dict(template.schema),
        secret_fields=list(template.secret_fields),
        env_vars=[
            TemplateEnvVar(name=name, field=field, secret=field in template.secret_fields)
            for name, field in template.env.items()
        ],
    )


def integration_out(integration: DomainIntegration) -> Integration:
    return Integration(
        id=integration.id,
        organization_id=integration.organization_id,
        name=integration.name,
        kind=integration.kind,
        configuration=integration.masked_configuration(),
        enabled=integration.enabled,
        created_at=integration.created_at,
        updated_at=integration.updated_at,
    )


class IntegrationTemplateController(Controller):
    path = "/api/v1/integration-templates"
    tags = ["integration-templates"]

    @get("/", operation_id="listIntegrationTemplates", responses=errors())
    async def list_templates(self, scope: Scope, limit: Limit = 50, offset: Offset = 0) -> IntegrationTemplateList:
        """The built-in kinds: each one's configuration schema, its secret fields, the env vars it gives."""
        caller(scope)
        items = [template_out(template) for template in catalog.TEMPLATES[offset : offset + limit]]
        return IntegrationTemplateList(items=items, total=len(catalog.TEMPLATES), limit=limit, offset=offset)

    @get("/{kind:str}", operation_id="getIntegrationTemplate", responses=errors(404))
    async def get_template(self, kind: FromPath[str], scope: Scope) -> IntegrationTemplate:
        caller(scope)
        return template_out(usecases.get_template(kind))


class IntegrationController(Controller):
    path = "/api/v1/integrations"
    tags = ["integrations"]

    @post("/", operation_id="createIntegration", status_code=201, responses=errors(409, 415, 503))
    async def create_integration(self, data: JSONBody[IntegrationCreate], scope: Scope) -> Integration:
        """Configure a built-in kind; secret fields are sealed and answered as "********" (503
        SECRETS_KEY_MISSING when there are some and no key is configured)."""
        ports, principal = caller(scope)
        command = usecases.CreateIntegration(
            name=data.name, kind=data.kind, configuration=data.configuration, enabled=data.enabled
        )
        return integration_out(await usecases.create_integration(ports, principal.organization_id, command))

    @get("/", operation_id="listIntegrations", responses=errors())
    async def list_integrations(
        self, scope: Scope, limit: Limit = 50, offset: Offset = 0, order: OldestFirst = None
    ) -> IntegrationList:
        ports, principal = caller(scope)
        page = await usecases.list_integrations(ports, principal.organization_id, page_request(limit, offset, order))
        return page_of(IntegrationList, page, integration_out)

    @get("/{integration_id:str}", operation_id="getIntegration", responses=errors(404))
    async def get_integration(self, integration_id: FromPath[str], scope: Scope) -> Integration:
        ports, principal = caller(scope)
        return integration_out(await usecases.get_integration(ports, principal.organization_id, integration_id))

    @patch("/{integration_id:str}", operation_id="updateIntegration", responses=errors(404, 409, 415, 503))
    async def update_integration(
        self, integration_id: FromPath[str], data: JSONBody[IntegrationUpdate], scope: Scope
    ) -> Integration:
        """Change the given fields; a `configuration` replaces the stored one, a secret field given as "********"
        keeps its stored value."""
        ports, principal = caller(scope)
        command = usecases.UpdateIntegration(**given_fields(data))
        updated = await usecases.update_integration(ports, principal.organization_id, integration_id, command)
        return integration_out(updated)

    @delete(
        "/{integration_id:str}",
        operation_id="deleteIntegration",
        status_code=204,
        responses=errors(404, 409),
        response_headers=DANGLING,
    )
    async def delete_integration(
        self, integration_id: FromPath[str], scope: Scope, force: Force = False
    ) -> Response[None]:
        ports, principal = caller(scope)
        return deleted(await usecases.delete_integration(ports, principal.organization_id, integration_id, force=force))
