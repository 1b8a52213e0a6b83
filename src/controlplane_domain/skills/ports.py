"""What the skills area needs from a store, and from a JSON Schema validator."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from controlplane_domain.config import JSONObject
from controlplane_domain.repository import Repository
from controlplane_domain.skills.entity import Skill, SkillOwner


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    """One way an instance breaks a schema: where (keys and indexes from the instance's root) and why."""

    path: tuple[str | int, ...]
    message: str


class SchemaValidator(Protocol):
    def problems(self, schema: JSONObject, instance: Any) -> list[SchemaProblem]:
        """Every way `instance` breaks `schema` (JSON Schema draft 2020-12), most relevant first; [] when valid."""


class SkillRepository(Repository[Skill], Protocol):
    async def add(self, skill: Skill) -> None:
        """Store a new skill; Conflict when its name is taken in the organization."""

    async def get_many(self, organization_id: str, skill_ids: Sequence[str]) -> list[Skill]:
        """The organization's skills among `skill_ids` (any order; unknown ids left out)."""

    async def update(self, skill: Skill) -> None:
        """Replace a stored skill; Conflict when its new name is taken."""

    async def delete(self, organization_id: str, skill_id: str) -> None:
        """Delete the skill and every attachment of it (the owners' `skill_ids` are the use case's)."""

    async def attachments(self, organization_id: str, owner: SkillOwner, owner_id: str) -> dict[str, JSONObject | None]:
        """The skills attached to the agent, team or environment: skill id -> override, in attachment order."""

    async def attached_of(
        self, organization_id: str, owner: SkillOwner, owner_ids: Sequence[str]
    ) -> dict[str, dict[str, tuple[Skill, JSONObject | None]]]:
        """The skills attached to several agents (teams, environments) with each attachment's override, in one
        read: owner id -> skill id -> (skill, override), in attachment order; an owner without any is left out."""

    async def attach(
        self,
        organization_id: str,
        owner: SkillOwner,
        owner_id: str,
        skill_id: str,
        override: JSONObject | None,
        now: datetime,
    ) -> None:
        """Attach the skill with this override (replacing the override of an attachment already there)."""

    async def detach(self, organization_id: str, owner: SkillOwner, owner_id: str, skill_ids: Sequence[str]) -> None:
        """Remove these attachments (absent ones are no change)."""

    async def owners(self, organization_id: str, owner: SkillOwner, skill_id: str) -> list[str]:
        """The ids of the agents (teams, environments) the skill is attached to."""
