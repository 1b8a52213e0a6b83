"""Who names an object, in the memory store (controlplane_domain/references.py): each referring type's objects
of the organization asked `references.NAMES`, and the link tables read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

from controlplane_adapters.projects.memory import Memberships
from controlplane_adapters.references import LINKS, NAMES
from controlplane_adapters.skills.memory import Attachments
from controlplane_domain.references import REFERRERS, Referrer, Target
from controlplane_domain.skills.entity import SkillOwner

if TYPE_CHECKING:
    from controlplane_adapters.memory.store import MemoryUnitOfWork


class MemoryReferrers:
    @classmethod
    def on(cls, unit: MemoryUnitOfWork) -> Self:
        """The repository of a memory unit of work (`areas.py`)."""
        referring = {
            kind: unit.table(table)
            for kind, table in (
                ("agent", "agents"),
                ("team", "teams"),
                ("job", "jobs"),
                ("workflow", "workflows"),
                ("api_key", "api_keys"),
                ("worker_queue", "queues"),
                ("environment", "environments"),
                ("custom_integration", "custom_integrations"),
                ("task_plan", "task_plans"),
            )
        }
        return cls(referring, unit.table("project_members"), unit.table("skill_attachments"))

    def __init__(self, tables: Mapping[str, Mapping[str, Any]], members: Memberships, attachments: Attachments) -> None:
        self.tables = tables  # referrer type -> its objects by id
        self.members = members
        self.attachments = attachments

    def _linked(self, organization_id: str, target: Target, referrer: str) -> list[str]:
        if referrer == SkillOwner.ENVIRONMENT.value:
            owners = self.tables["environment"]
            return [
                owner_id
                for (kind, owner_id, skill_id), (org, _, _) in self.attachments.items()
                if kind == referrer and skill_id == target.id and org == organization_id and owner_id in owners
            ]
        alive = self.tables[referrer]  # (a member's delete leaves its memberships here: they read as gone)
        return [
            member
            for (project, kind, member) in self.members
            if project == target.id and kind == referrer and member in alive
        ]

    async def naming(self, organization_id: str, target: Target, limit: int) -> list[Referrer]:
        found: list[Referrer] = []
        for referrer in REFERRERS[target.kind]:
            if len(found) >= limit:
                break
            if (target.kind, referrer) in LINKS:
                ids = self._linked(organization_id, target, referrer)
            else:
                names = NAMES[referrer]
                ids = [
                    item.id
                    for item in self.tables[referrer].values()
                    if item.organization_id == organization_id and names(item, target)
                ]
            found.extend(Referrer(referrer, each) for each in sorted(ids))
        return found[:limit]
