"""LLM model wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from msgspec import UNSET, Meta, UnsetType

from controlplane_wire.base import OrganizationResource, Page, Request
from controlplane_wire.runtimes import RuntimeId

Text255 = Annotated[str, Meta(min_length=1, max_length=255)]
Price = Annotated[
    float,
    Meta(ge=0, le=1_000_000, description="the price of a million tokens (the organization's currency); null: unpriced"),
]

Runtimes = Annotated[list[RuntimeId], Meta(extra_json_schema={"uniqueItems": True})]


class ModelCreate(Request, kw_only=True):
    value: Text255
    label: Text255 | None = None
    provider: Text255
    description: str | None = None
    enabled: bool = True
    compatible_runtimes: Runtimes | None = None
    input_cost_per_million: Price | None = None
    output_cost_per_million: Price | None = None


class ModelUpdate(Request, kw_only=True):
    value: Text255 | UnsetType = UNSET
    label: Text255 | UnsetType = UNSET
    provider: Text255 | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    enabled: bool | UnsetType = UNSET
    compatible_runtimes: Runtimes | UnsetType = UNSET
    input_cost_per_million: Price | UnsetType | None = UNSET
    output_cost_per_million: Price | UnsetType | None = UNSET


class Model(OrganizationResource, kw_only=True):
    value: str
    label: str
    provider: str
    description: str | None
    enabled: bool
    compatible_runtimes: list[str]
    input_cost_per_million: float | None
    output_cost_per_million: float | None
    created_at: datetime
    updated_at: datetime


class ModelList(Page[Model]):
    items: list[Model]
