"""Custom integrations: create, list, get, patch, delete."""

from __future__ import annotations

from typing import Any

from litestar import Controller

from controlplane_domain.integrations import custom
from controlplane_domain.integrations.entity import CustomIntegration as DomainCustomIntegration
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, routes
from controlplane_wire.base import to_wire
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


def _create(data: CustomIntegrationCreate) -> custom.CreateCustomIntegration:
    return custom.CreateCustomIntegration(**{**given_fields(data), "files": _files(data.files)})


def _update(data: CustomIntegrationUpdate) -> custom.UpdateCustomIntegration:
    changes: dict[str, Any] = given_fields(data)
    if "files" in changes:
        changes["files"] = _files(changes["files"])
    return custom.UpdateCustomIntegration(**changes)


def custom_out(integration: DomainCustomIntegration) -> CustomIntegration:
    files = [FileOut(path=file.path, content=file.content, mode=f"{file.mode:04o}") for file in integration.files]
    return to_wire(integration, CustomIntegration, files=files)


@routes(
    Resource("custom_integration", "CustomIntegration", CustomIntegration, CustomIntegrationList, custom_out),
    Create(
        custom.create_custom_integration,
        body=CustomIntegrationCreate,
        command=_create,
        doc="""An integration of the organization's own: env vars, secrets by name (they must exist), files and setup
        commands.""",
    ),
    Listing(custom.list_custom_integrations),
    Read(custom.get_custom_integration),
    Update(custom.update_custom_integration, body=CustomIntegrationUpdate, command=_update),
    Remove(custom.delete_custom_integration),
)
class CustomIntegrationController(Controller):
    path = "/api/v1/custom-integrations"
    tags = ["custom-integrations"]
