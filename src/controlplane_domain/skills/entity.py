"""Skills (tool sets an agent may use), where they are attached, and an agent's skills once resolved."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.config import JSONObject


class SkillOwner(enum.StrEnum):
    """What a skill is attached to; also the layers of the resolution, in order (an agent's wins)."""

    ENVIRONMENT = "environment"
    TEAM = "team"
    AGENT = "agent"


LAYERS = (SkillOwner.ENVIRONMENT, SkillOwner.TEAM, SkillOwner.AGENT)


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """A named, typed tool set of one organization; `configuration` follows its type's schema (catalog.py)."""

    audited: ClassVar[Audited] = Audited("skill")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    type: str
    description: str | None
    enabled: bool
    configuration: JSONObject
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class AttachedSkill:
    """A skill attached to an agent, team or environment, with that attachment's override and the result."""

    skill: Skill
    configuration_override: JSONObject | None
    configuration: JSONObject


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedSkill:
    """A skill as an agent gets it: configuration merged layer by layer; `source` is the last layer naming it."""

    skill_id: str
    name: str
    type: str
    description: str | None
    configuration: JSONObject
    source: SkillOwner
    layers: tuple[SkillOwner, ...]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON Merge Patch: objects merge key by key, null removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged
