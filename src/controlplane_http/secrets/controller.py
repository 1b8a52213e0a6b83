"""Secrets: create, list, get, patch, delete (the value is write-only), and the accesses recorded for leases."""

from __future__ import annotations

from litestar import Controller, get
from litestar.params import FromPath
from litestar.types import Scope

from controlplane_domain.secrets import usecases
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, given_as, routes
from controlplane_http.handlers import Limit, Offset, OldestFirst, caller, errors, page_of, page_request
from controlplane_wire.base import to_wire
from controlplane_wire.secrets import (
    Secret,
    SecretAccess,
    SecretAccessList,
    SecretCreate,
    SecretList,
    SecretUpdate,
)


@routes(
    Resource("secret", "Secret", Secret, SecretList),
    Create(
        usecases.create_secret,
        body=SecretCreate,
        command=given_as(usecases.CreateSecret),
        codes=(409, 415, 503),
        principal=True,
        doc="Store a secret, encrypted; its value is never answered (503 SECRETS_KEY_MISSING without a key).",
    ),
    Listing(usecases.list_secrets),
    Read(usecases.get_secret),
    Update(
        usecases.update_secret,
        body=SecretUpdate,
        command=given_as(usecases.UpdateSecret),
        codes=(404, 409, 415, 503),
        principal=True,
        doc="Change the given fields; a `value` bumps `version` (503 SECRETS_KEY_MISSING without a key).",
    ),
    Remove(usecases.delete_secret, principal=True),
)
class SecretController(Controller):
    path = "/api/v1/secrets"
    tags = ["secrets"]

    @get("/{secret_id:str}/accesses", operation_id="listSecretAccesses", responses=errors(404))
    async def list_accesses(
        self, secret_id: FromPath[str], scope: Scope, limit: Limit = 50, offset: Offset = 0, order: OldestFirst = None
    ) -> SecretAccessList:
        """The reads of the secret's value for leases: which worker, when, for which execution (oldest first)."""
        ports, principal = caller(scope)
        page = await usecases.list_secret_accesses(
            ports, principal.organization_id, secret_id, page_request(limit, offset, order)
        )
        return page_of(SecretAccessList, page, lambda access: to_wire(access, SecretAccess))
