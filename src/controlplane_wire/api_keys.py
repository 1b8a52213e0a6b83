"""API key wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

from controlplane_domain.api_keys.entity import MAX_BINDINGS
from controlplane_domain.principal import Role
from controlplane_wire.base import OrganizationResource, Page, Request

Bindings = Annotated[
    list[Annotated[str, Meta(min_length=1, max_length=64)]],
    Meta(
        max_length=MAX_BINDINGS,
        description="a worker key only: the ids it is bound to (empty: any queue of the organization)",
    ),
]


class ApiKeyCreate(Request, kw_only=True):
    name: Annotated[str, Meta(min_length=1, max_length=255)]
    role: Role = Role.MEMBER  # `worker`: the worker protocol only, issued by admins (docs/executions.md)
    expires_at: Annotated[datetime, Meta(tz=True)] | None = None  # with its offset: a time without one is 422
    environment_ids: Bindings = []  # a worker key works on these environments' queues ...
    queue_ids: Bindings = []  # ... and on these queues; with neither, on any queue of its organization


class ApiKey(OrganizationResource, kw_only=True):
    name: str
    role: Role
    prefix: str
    created_by: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    environment_ids: list[str] = []
    queue_ids: list[str] = []


class ApiKeyCreated(ApiKey, kw_only=True):
    """Returned once, at creation: `key` is never shown again."""

    key: str


class ApiKeyList(Page[ApiKey]):
    items: list[ApiKey]


class Caller(msgspec.Struct, kw_only=True):
    """Who the credential of the request is: its organization, subject and role (the console reads it)."""

    organization_id: str
    subject: str
    role: Role
    method: str  # how the caller was authenticated: `api_key`, `jwt` or `none` (authentication off)
