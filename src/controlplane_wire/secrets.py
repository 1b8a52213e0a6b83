"""Secret wire types: `value` is in the requests only; no response carries it."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.secrets.entity import MAX_VALUE_BYTES
from controlplane_wire.base import OrganizationResource, Page, Request

SecretName = Annotated[
    str,
    Meta(pattern="^[A-Za-z_][A-Za-z0-9_]{0,127}$", description="a letter or _, then up to 127 letters, digits or _"),
]
SecretValue = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=MAX_VALUE_BYTES,
        description=f"write-only: never answered; at most {MAX_VALUE_BYTES} bytes (UTF-8)",
        extra_json_schema={"writeOnly": True},
    ),
]


class SecretCreate(Request, kw_only=True):
    name: SecretName
    value: SecretValue
    description: str | None = None


class SecretUpdate(Request, kw_only=True):
    name: SecretName | UnsetType = UNSET
    value: SecretValue | UnsetType = UNSET
    description: str | UnsetType | None = UNSET


class Secret(OrganizationResource, kw_only=True):
    name: str
    description: str | None
    version: int
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None


class SecretList(Page[Secret]):
    items: list[Secret]


class SecretAccess(msgspec.Struct, kw_only=True):
    id: str
    secret_id: str
    execution_id: str
    worker_id: str
    accessed_at: datetime


class SecretAccessList(Page[SecretAccess]):
    items: list[SecretAccess]
