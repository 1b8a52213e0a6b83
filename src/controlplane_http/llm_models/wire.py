"""LLM model wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_http.wire import Request

Text255 = Annotated[str, Meta(min_length=1, max_length=255)]


class ModelCreate(Request, kw_only=True):
    value: Text255
    label: Text255 | None = None
    provider: Text255
    description: str | None = None
    enabled: bool = True
    compatible_runtimes: list[str] | None = None


class ModelUpdate(Request, kw_only=True):
    value: Text255 | UnsetType = UNSET
    label: Text255 | UnsetType = UNSET
    provider: Text255 | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    enabled: bool | UnsetType = UNSET
    compatible_runtimes: list[str] | UnsetType = UNSET


class Model(msgspec.Struct, kw_only=True):
    id: str
    organization_id: str
    value: str
    label: str
    provider: str
    description: str | None
    enabled: bool
    compatible_runtimes: list[str]
    created_at: datetime
    updated_at: datetime


class ModelList(msgspec.Struct, kw_only=True):
    items: list[Model]
    total: int
    limit: int
    offset: int
