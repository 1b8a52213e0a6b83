"""Project wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.projects.entity import ProjectStatus
from controlplane_wire.base import Name, OrganizationResource, Page, Request

Key = Annotated[str, Meta(pattern="^[A-Z][A-Z0-9]{1,9}$", description="an uppercase letter, then 1-9 of A-Z0-9")]


class ProjectCreate(Request, kw_only=True):
    name: Name
    key: Key
    description: str | None = None
    status: ProjectStatus = ProjectStatus.ACTIVE
    settings: dict[str, Any] = {}


class ProjectUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    key: Key | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    status: ProjectStatus | UnsetType = UNSET
    settings: dict[str, Any] | UnsetType = UNSET


class Project(OrganizationResource, kw_only=True):
    name: str
    key: str
    description: str | None
    status: ProjectStatus
    settings: dict[str, Any]
    agent_count: int
    team_count: int
    created_at: datetime
    updated_at: datetime


class ProjectList(Page[Project]):
    items: list[Project]
