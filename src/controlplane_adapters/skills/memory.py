"""Skills in the memory store: the skills, and where each is attached with its override."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Self

from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.config import JSONObject
from controlplane_domain.skills.entity import Skill, SkillOwner

if TYPE_CHECKING:
    from controlplane_adapters.memory.store import MemoryUnitOfWork

Attachments = dict[tuple[str, str, str], tuple[str, JSONObject | None, datetime]]
"""(owner kind, owner id, skill id) -> (organization id, override, when attached)."""


class MemorySkillRepository(MemoryRepository[Skill]):
    noun = "skill"
    audited = Skill.audited

    @classmethod
    def on(cls, unit: MemoryUnitOfWork) -> Self:
        """The repository of a memory unit of work (`areas.py`)."""
        owners = {
            SkillOwner.AGENT: unit.table("agents"),
            SkillOwner.TEAM: unit.table("teams"),
            SkillOwner.ENVIRONMENT: unit.table("environments"),
        }
        return cls(unit.table("skills"), unit.table("skill_attachments"), owners)

    def __init__(self, rows: dict[str, Skill], attached: Attachments, owners: Mapping[SkillOwner, Mapping[str, Any]]):
        super().__init__(rows)
        self.attached = attached
        self._owners = owners  # the agents', teams' and environments' tables: an owner deleted has no attachment

    def _alive(self, kind: str, owner_id: str, skill_id: str) -> bool:
        return skill_id in self.rows and owner_id in self._owners[SkillOwner(kind)]

    async def get_many(self, organization_id: str, skill_ids: Sequence[str]) -> list[Skill]:
        found = (self.rows.get(skill_id) for skill_id in set(skill_ids))
        return [skill for skill in found if skill is not None and skill.organization_id == organization_id]

    async def delete(self, organization_id: str, object_id: str) -> None:
        if await self.get(organization_id, object_id) is not None:
            await super().delete(organization_id, object_id)  # the row, and its audit event
            for key in [key for key in self.attached if key[2] == object_id]:
                del self.attached[key]

    async def attachments(self, organization_id: str, owner: SkillOwner, owner_id: str) -> dict[str, JSONObject | None]:
        mine = [
            (at, skill_id, override)
            for (kind, owner_key, skill_id), (organization, override, at) in self.attached.items()
            if kind == owner.value and owner_key == owner_id and organization == organization_id
            and self._alive(kind, owner_key, skill_id)
        ]  # fmt: skip
        return {skill_id: override for _, skill_id, override in sorted(mine, key=lambda item: item[:2])}

    async def attached_of(
        self, organization_id: str, owner: SkillOwner, owner_ids: Sequence[str]
    ) -> dict[str, dict[str, tuple[Skill, JSONObject | None]]]:
        found = {}
        for owner_id in set(owner_ids):
            attached = await self.attachments(organization_id, owner, owner_id)
            if attached:
                found[owner_id] = {skill_id: (self.rows[skill_id], override) for skill_id, override in attached.items()}
        return found

    async def attach(
        self,
        organization_id: str,
        owner: SkillOwner,
        owner_id: str,
        skill_id: str,
        override: JSONObject | None,
        now: datetime,
    ) -> None:
        key = (owner.value, owner_id, skill_id)
        present = self.attached.get(key)
        self.attached[key] = (organization_id, override, now if present is None else present[2])

    async def detach(self, organization_id: str, owner: SkillOwner, owner_id: str, skill_ids: Sequence[str]) -> None:
        for skill_id in skill_ids:
            key = (owner.value, owner_id, skill_id)
            if key in self.attached and self.attached[key][0] == organization_id:
                del self.attached[key]

    async def owners(self, organization_id: str, owner: SkillOwner, skill_id: str) -> list[str]:
        return sorted(
            owner_id
            for (kind, owner_id, attached), (organization, _, _) in self.attached.items()
            if kind == owner.value and attached == skill_id and organization == organization_id
            and self._alive(kind, owner_id, attached)
        )  # fmt: skip
