"""Secrets: create, list, get, patch, delete (the value is write-only), and the accesses recorded for leases."""

from __future__ import annotations

from litestar import Controller

from controlplane_domain.secrets import usecases
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, given_as, routes
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
@routes(
    Resource("access", "SecretAccess", SecretAccess, SecretAccessList, plural=("accesses", "SecretAccesses")),
    Listing(
        usecases.list_secret_accesses,
        under="secret_id",
        codes=(404,),
        doc="The reads of the secret's value for leases: which worker, when, for which execution (oldest first).",
    ),
)
class SecretController(Controller):
    path = "/api/v1/secrets"
    tags = ["secrets"]


AREA = HttpArea((SecretController,), visible={"secret_id": usecases.get_secret})
