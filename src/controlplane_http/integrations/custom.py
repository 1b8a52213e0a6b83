"""Custom integrations: create, list, get, patch, delete."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, delete, get, patch, post
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.integrations import custom
from controlplane_domain.integrations.entity import CustomIntegration as DomainCustomIntegration
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
    CustomIntegration,
    CustomIntegrationCreate,
    CustomIntegrationList,
    CustomIntegrationUpdate,
    FileIn,
    FileOut,
)


def _files(files: list[FileIn]) -> list[custom.FileSpec]:
    return [custom.FileSpec(file.path, file.content, file.mode) for file in files]


def custom_out(integration: DomainCustomIntegration) -> CustomIntegration:
    return CustomIntegration(
        id=integration.id,
        organization_id=integration.organization_id,
        name=integration.name,
        description=integration.description,
        env_vars=integration.env_vars,
        secret_names=integration.secret_names,
        files=[FileOut(path=file.path, content=file.content, mode=f"{file.mode:04o}") for file in integration.files],
        setup_commands=integration.setup_commands,
        enabled=integration.enabled,
        created_at=integration.created_at,
        updated_at=integration.updated_at,
    )


class CustomIntegrationController(Controller):
    path = "/api/v1/custom-integrations"
    tags = ["custom-integrations"]

    @post("/", operation_id="createCustomIntegration", status_code=201, responses=errors(409, 415))
    async def create_custom_integration(
        self, data: JSONBody[CustomIntegrationCreate], scope: Scope
    ) -> CustomIntegration:
        """An integration of the organization's own: env vars, secrets by name (they must exist), files and setup
        commands."""
        ports, principal = caller(scope)
        command = custom.CreateCustomIntegration(
            name=data.name,
            description=data.description,
            env_vars=data.env_vars,
            secret_names=data.secret_names,
            files=_files(data.files),
            setup_commands=data.setup_commands,
            enabled=data.enabled,
        )
        return custom_out(await custom.create_custom_integration(ports, principal.organization_id, command))

    @get("/", operation_id="listCustomIntegrations", responses=errors())
    async def list_custom_integrations(
        self, scope: Scope, limit: Limit = 50, offset: Offset = 0, order: OldestFirst = None
    ) -> CustomIntegrationList:
        ports, principal = caller(scope)
        page = await custom.list_custom_integrations(
            ports, principal.organization_id, page_request(limit, offset, order)
        )
        return page_of(CustomIntegrationList, page, custom_out)

    @get("/{custom_integration_id:str}", operation_id="getCustomIntegration", responses=errors(404))
    async def get_custom_integration(self, custom_integration_id: FromPath[str], scope: Scope) -> CustomIntegration:
        ports, principal = caller(scope)
        found = await custom.get_custom_integration(ports, principal.organization_id, custom_integration_id)
        return custom_out(found)

    @patch("/{custom_integration_id:str}", operation_id="updateCustomIntegration", responses=errors(404, 409, 415))
    async def update_custom_integration(
        self, custom_integration_id: FromPath[str], data: JSONBody[CustomIntegrationUpdate], scope: Scope
    ) -> CustomIntegration:
        ports, principal = caller(scope)
        changes: dict[str, Any] = given_fields(data)
        if "files" in changes:
            changes["files"] = _files(changes["files"])
        command = custom.UpdateCustomIntegration(**changes)
        updated = await custom.update_custom_integration(
            ports, principal.organization_id, custom_integration_id, command
        )
        return custom_out(updated)

    @delete(
        "/{custom_integration_id:str}",
        operation_id="deleteCustomIntegration",
        status_code=204,
        responses=errors(404, 409),
        response_headers=DANGLING,
    )
    async def delete_custom_integration(
        self, custom_integration_id: FromPath[str], scope: Scope, force: Force = False
    ) -> Response[None]:
        ports, principal = caller(scope)
        return deleted(
            await custom.delete_custom_integration(ports, principal.organization_id, custom_integration_id, force=force)
        )
