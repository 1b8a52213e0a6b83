"""API key wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

from controlplane_domain.principal import Role
from controlplane_http.wire import Request


class ApiKeyCreate(Request, kw_only=True):
    name: Annotated[str, Meta(min_length=1, max_length=255)]
    role: Role = Role.MEMBER
    expires_at: Annotated[datetime, Meta(tz=True)] | None = None  # with its offset: a time without one is 422


class ApiKey(msgspec.Struct, kw_only=True):
    id: str
    organization_id: str
    name: str
    role: Role
    prefix: str
    created_by: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None


class ApiKeyCreated(ApiKey, kw_only=True):
    """Returned once, at creation: `key` is never shown again."""

    key: str


class ApiKeyList(msgspec.Struct, kw_only=True):
    items: list[ApiKey]
    total: int
    limit: int
    offset: int
