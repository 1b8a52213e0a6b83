"""Template wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.templates.entity import TemplateKind
from controlplane_wire.base import Name, Page, Request

ParameterName = Annotated[
    str, Meta(pattern="^[A-Za-z_][A-Za-z0-9_]*$", max_length=64, description="an identifier, unique in the template")
]
Body = Annotated[
    dict[str, Any],
    Meta(
        description="an agent's or a team's creation payload (as POST /api/v1/agents or /teams) whose strings may "
        "hold {{parameter}} placeholders"
    ),
]


class TemplateParameter(Request, kw_only=True):
    name: ParameterName
    description: str | None = None
    required: bool = False
    default: Annotated[Any, Meta(description="the value when none is given (null: no default)")] = None


Parameters = Annotated[list[TemplateParameter], Meta(max_length=100)]


class TemplateCreate(Request, kw_only=True):
    name: Name
    kind: TemplateKind
    description: str | None = None
    parameters: Parameters = []
    body: Body


class TemplateUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    kind: TemplateKind | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    parameters: Parameters | UnsetType = UNSET
    body: Body | UnsetType = UNSET


class Template(msgspec.Struct, kw_only=True):
    id: str
    organization_id: Annotated[str | None, Meta(description="null for a built-in template")]
    builtin: bool
    name: str
    kind: TemplateKind
    description: str | None
    parameters: list[TemplateParameter]
    body: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class TemplateList(Page[Template]):
    items: list[Template]


class TemplateInstantiate(Request, kw_only=True):
    parameters: Annotated[dict[str, Any], Meta(description="a value for each parameter, by name")] = {}
    name: Annotated[Name | None, Meta(description="the created object's name (replaces the body's)")] = None
