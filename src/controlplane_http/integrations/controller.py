"""Integration templates (the built-in kinds) and integrations: create, list, get, patch, delete."""

from __future__ import annotations

from litestar import Controller, get
from litestar.params import FromPath
from litestar.types import Scope

from controlplane_domain.integrations import catalog, custom, usecases
from controlplane_domain.integrations.entity import Integration as DomainIntegration
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, given_as, routes
from controlplane_http.handlers import Limit, Offset, caller, errors
from controlplane_http.integrations.custom import CustomIntegrationController
from controlplane_wire.base import to_wire
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
    return to_wire(integration, Integration, configuration=integration.masked_configuration())


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


@routes(
    Resource("integration", "Integration", Integration, IntegrationList, integration_out),
    Create(
        usecases.create_integration,
        body=IntegrationCreate,
        command=given_as(usecases.CreateIntegration),
        codes=(409, 415, 503),
        doc="""Configure a built-in kind; secret fields are sealed and answered as "********" (503
        SECRETS_KEY_MISSING when there are some and no key is configured).""",
    ),
    Listing(usecases.list_integrations),
    Read(usecases.get_integration),
    Update(
        usecases.update_integration,
        body=IntegrationUpdate,
        command=given_as(usecases.UpdateIntegration),
        codes=(404, 409, 415, 503),
        doc="""Change the given fields; a `configuration` replaces the stored one, a secret field given as "********"
        keeps its stored value.""",
    ),
    Remove(usecases.delete_integration),
)
class IntegrationController(Controller):
    path = "/api/v1/integrations"
    tags = ["integrations"]


AREA = HttpArea(
    (IntegrationTemplateController, IntegrationController, CustomIntegrationController),
    visible={"integration_id": usecases.get_integration, "custom_integration_id": custom.get_custom_integration},
)
