"""Policy wire types: policies, the dry run, the decision log."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.policies.entity import REGO_MAX_LENGTH, Action, Enforcement
from controlplane_wire.base import Name, OrganizationResource, Page, Request

Rego = Annotated[str, Meta(min_length=1, max_length=REGO_MAX_LENGTH, description="a Rego module with a `deny` rule")]
Actions = Annotated[
    list[Action],
    Meta(
        min_length=1,
        max_length=len(Action),
        description="the actions it guards",
        extra_json_schema={"uniqueItems": True},
    ),
]


class PolicyCreate(Request, kw_only=True):
    name: Name
    description: str | None = None
    rego: Rego
    enabled: bool = True
    enforcement: Enforcement = Enforcement.ENFORCE
    actions: Actions


class PolicyUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    rego: Rego | UnsetType = UNSET
    enabled: bool | UnsetType = UNSET
    enforcement: Enforcement | UnsetType = UNSET
    actions: Actions | UnsetType = UNSET


class Policy(OrganizationResource, kw_only=True):
    name: str
    description: str | None
    rego: str
    enabled: bool
    enforcement: Enforcement
    actions: list[Action]
    created_at: datetime
    updated_at: datetime


class PolicyList(Page[Policy]):
    items: list[Policy]


class ResourceIn(Request, kw_only=True):
    type: Annotated[str, Meta(min_length=1, max_length=32, description="agent, team, workflow, job, secret")]
    id: Annotated[str, Meta(max_length=64)] | None = None
    attributes: dict[str, Any] = {}


class EvaluateRequest(Request, kw_only=True):
    """A dry run: what the action's enabled policies decide for the caller on this resource and request."""

    action: Action
    resource: ResourceIn
    request: dict[str, Any] = {}


class PolicyOutcome(msgspec.Struct, kw_only=True):
    policy_id: str
    policy_name: str
    enforcement: Enforcement
    deny: list[str]
    error: str | None


class Evaluation(msgspec.Struct, kw_only=True):
    allowed: bool
    decisions: list[PolicyOutcome]


class DecisionPrincipal(msgspec.Struct, kw_only=True):
    subject: str | None
    roles: list[str]


class DecisionResource(msgspec.Struct, kw_only=True):
    type: str
    id: str | None


class PolicyDecision(OrganizationResource, kw_only=True):
    evaluation_id: str
    action: Action
    policy_id: str
    policy_name: str
    enforcement: Enforcement
    allowed: bool
    deny: list[str]
    error: str | None
    principal: DecisionPrincipal
    resource: DecisionResource
    created_at: datetime


class PolicyDecisionList(Page[PolicyDecision]):
    items: list[PolicyDecision]
