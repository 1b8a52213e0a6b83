"""Secrets: create, list, get, patch, delete (the value is write-only), and the accesses recorded for leases."""

from __future__ import annotations

from litestar import Controller, Response, delete, get, patch, post
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.secrets import entity, usecases
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
from controlplane_wire.secrets import (
    Secret,
    SecretAccess,
    SecretAccessList,
    SecretCreate,
    SecretList,
    SecretUpdate,
)


def secret_out(secret: entity.Secret) -> Secret:
    return Secret(
        id=secret.id,
        organization_id=secret.organization_id,
        name=secret.name,
        description=secret.description,
        version=secret.version,
        created_at=secret.created_at,
        updated_at=secret.updated_at,
        last_accessed_at=secret.last_accessed_at,
    )


def access_out(access: entity.SecretAccess) -> SecretAccess:
    return SecretAccess(
        id=access.id,
        secret_id=access.secret_id,
        execution_id=access.execution_id,
        worker_id=access.worker_id,
        accessed_at=access.accessed_at,
    )


class SecretController(Controller):
    path = "/api/v1/secrets"
    tags = ["secrets"]

    @post("/", operation_id="createSecret", status_code=201, responses=errors(409, 415, 503))
    async def create_secret(self, data: JSONBody[SecretCreate], scope: Scope) -> Secret:
        """Store a secret, encrypted; its value is never answered (503 SECRETS_KEY_MISSING without a key)."""
        ports, principal = caller(scope)
        command = usecases.CreateSecret(name=data.name, value=data.value, description=data.description)
        return secret_out(await usecases.create_secret(ports, principal.organization_id, command, principal=principal))

    @get("/", operation_id="listSecrets", responses=errors())
    async def list_secrets(
        self, scope: Scope, limit: Limit = 50, offset: Offset = 0, order: OldestFirst = None
    ) -> SecretList:
        ports, principal = caller(scope)
        page = await usecases.list_secrets(ports, principal.organization_id, page_request(limit, offset, order))
        return page_of(SecretList, page, secret_out)

    @get("/{secret_id:str}", operation_id="getSecret", responses=errors(404))
    async def get_secret(self, secret_id: FromPath[str], scope: Scope) -> Secret:
        ports, principal = caller(scope)
        return secret_out(await usecases.get_secret(ports, principal.organization_id, secret_id))

    @patch("/{secret_id:str}", operation_id="updateSecret", responses=errors(404, 409, 415, 503))
    async def update_secret(self, secret_id: FromPath[str], data: JSONBody[SecretUpdate], scope: Scope) -> Secret:
        """Change the given fields; a `value` bumps `version` (503 SECRETS_KEY_MISSING without a key)."""
        ports, principal = caller(scope)
        command = usecases.UpdateSecret(**given_fields(data))
        return secret_out(
            await usecases.update_secret(ports, principal.organization_id, secret_id, command, principal=principal)
        )

    @delete(
        "/{secret_id:str}",
        operation_id="deleteSecret",
        status_code=204,
        responses=errors(404, 409),
        response_headers=DANGLING,
    )
    async def delete_secret(self, secret_id: FromPath[str], scope: Scope, force: Force = False) -> Response[None]:
        ports, principal = caller(scope)
        return deleted(
            await usecases.delete_secret(ports, principal.organization_id, secret_id, principal=principal, force=force)
        )

    @get("/{secret_id:str}/accesses", operation_id="listSecretAccesses", responses=errors(404))
    async def list_accesses(
        self, secret_id: FromPath[str], scope: Scope, limit: Limit = 50, offset: Offset = 0, order: OldestFirst = None
    ) -> SecretAccessList:
        """The reads of the secret's value for leases: which worker, when, for which execution (oldest first)."""
        ports, principal = caller(scope)
        page = await usecases.list_secret_accesses(
            ports, principal.organization_id, secret_id, page_request(limit, offset, order)
        )
        return page_of(SecretAccessList, page, access_out)
