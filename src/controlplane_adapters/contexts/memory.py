"""Contexts in the memory store: the contexts set on owners, and the contexts stored with executions."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Self

from controlplane_adapters.projects.memory import Memberships
from controlplane_domain.agents.entity import Agent
from controlplane_domain.contexts.entity import Layer, OwnedContext, OwnerType, ResolvedContext
from controlplane_domain.environments.entity import WorkerQueue
from controlplane_domain.executions.entity import Execution
from controlplane_domain.projects.entity import MemberKind

if TYPE_CHECKING:
    from controlplane_adapters.memory.store import MemoryUnitOfWork


class MemoryContextRepository:
    @classmethod
    def on(cls, unit: MemoryUnitOfWork) -> Self:
        """The repository of a memory unit of work (`areas.py`)."""
        return cls(
            unit.table("contexts"),
            unit.table("execution_contexts"),
            owners={
                OwnerType.PROJECT: unit.table("projects"),
                OwnerType.ENVIRONMENT: unit.table("environments"),
                OwnerType.TEAM: unit.table("teams"),
                OwnerType.AGENT: unit.table("agents"),
            },
            queues=unit.table("queues"),
            members=unit.table("project_members"),
            executions=unit.table("executions"),
        )

    def __init__(
        self,
        rows: dict[str, OwnedContext],
        stored: Mapping[str, ResolvedContext],
        *,
        owners: Mapping[OwnerType, Mapping[str, Any]],
        queues: Mapping[str, WorkerQueue],
        members: Memberships,
        executions: Mapping[str, Execution],
    ) -> None:
        self.rows = rows  # owner id -> its context (owner ids are unique across the four kinds)
        self.stored = stored  # execution id -> its context
        self.owners, self.queues, self.members, self.executions = owners, queues, members, executions

    def _owner_exists(self, organization_id: str, owner_type: OwnerType, owner_id: str | None) -> bool:
        owner = self.owners[owner_type].get(owner_id) if owner_id is not None else None
        return owner is not None and owner.organization_id == organization_id

    async def get(self, organization_id: str, owner_type: OwnerType, owner_id: str) -> OwnedContext | None:
        owned = self.rows.get(owner_id)
        if owned is None or (owned.organization_id, owned.owner_type) != (organization_id, owner_type):
            return None
        return owned if self._owner_exists(organization_id, owner_type, owner_id) else None

    async def put(self, owned: OwnedContext) -> None:
        self.rows[owned.owner_id] = owned

    async def delete(self, organization_id: str, owner_type: OwnerType, owner_id: str) -> None:
        if await self.get(organization_id, owner_type, owner_id) is not None:
            del self.rows[owner_id]

    async def applicable(
        self, organization_id: str, *, agent_id: str | None, team_id: str | None, queue_id: str
    ) -> list[Layer]:
        agent: Agent | None = self.owners[OwnerType.AGENT].get(agent_id) if agent_id is not None else None
        if agent is not None and agent.organization_id != organization_id:
            agent = None
        if team_id is None and agent is not None:
            team_id = agent.team_id
        queue = self.queues.get(queue_id)
        environment_id = queue.environment_id if queue and queue.organization_id == organization_id else None
        wanted: list[tuple[OwnerType, str | None, datetime | None]] = [
            (OwnerType.AGENT, agent_id, None),
            (OwnerType.TEAM, team_id, None),
            (OwnerType.ENVIRONMENT, environment_id, None),
        ]
        for (project_id, kind, member_id), when in self.members.items():
            if (kind, member_id) in ((MemberKind.AGENT.value, agent_id), (MemberKind.TEAM.value, team_id)):
                wanted.append((OwnerType.PROJECT, project_id, when))
        layers = []
        for owner_type, owner_id, joined in wanted:
            owned = None if owner_id is None else await self.get(organization_id, owner_type, owner_id)
            if owned is not None:
                layers.append(Layer(owned, joined))
        return layers

    async def any_in(self, organization_id: str) -> bool:
        return any(owned.organization_id == organization_id for owned in self.rows.values())

    async def for_execution(self, organization_id: str, execution_id: str) -> ResolvedContext | None:
        execution = self.executions.get(execution_id)
        if execution is None or execution.organization_id != organization_id:
            return None
        return self.stored.get(execution_id)
