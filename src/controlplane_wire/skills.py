"""Skill wire types: skills, their types, attachments and an agent's resolved skills."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.skills.catalog import SKILL_TYPES_BY_NAME
from controlplane_domain.skills.entity import SkillOwner
from controlplane_wire.base import Name, OrganizationResource, Page, Request, one_of

SkillTypeName = Annotated[str, one_of(SKILL_TYPES_BY_NAME, "GET /api/v1/skills/types")]
Configuration = Annotated[
    dict[str, Any], Meta(description="follows the JSON Schema of the skill's type (GET /api/v1/skills/types)")
]


class SkillType(msgspec.Struct, kw_only=True):
    type: str
    name: str
    description: str
    configuration_schema: dict[str, Any]


class SkillTypeList(Page[SkillType]):
    items: list[SkillType]


class SkillCreate(Request, kw_only=True):
    name: Name
    type: SkillTypeName
    description: str | None = None
    enabled: bool = True
    configuration: Configuration = {}


class SkillUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    type: SkillTypeName | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    enabled: bool | UnsetType = UNSET
    configuration: Configuration | UnsetType = UNSET


class Skill(OrganizationResource, kw_only=True):
    name: str
    type: str
    description: str | None
    enabled: bool
    configuration: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class SkillList(Page[Skill]):
    items: list[Skill]


class SkillAttach(Request, kw_only=True):
    configuration_override: (
        Annotated[dict[str, Any], Meta(description="merged over the skill's configuration (RFC 7386 JSON Merge Patch)")]
        | None
    ) = None


class AttachedSkill(msgspec.Struct, kw_only=True):
    skill: Skill
    configuration_override: dict[str, Any] | None
    configuration: dict[str, Any]


class AttachedSkillList(Page[AttachedSkill]):
    items: list[AttachedSkill]


class ResolvedSkill(msgspec.Struct, kw_only=True):
    skill_id: str
    name: str
    type: str
    description: str | None
    configuration: dict[str, Any]
    source: Annotated[SkillOwner, Meta(description="the last layer (environment, team, agent) that attaches it")]
    layers: list[SkillOwner]


class ResolvedSkillList(Page[ResolvedSkill]):
    items: list[ResolvedSkill]
