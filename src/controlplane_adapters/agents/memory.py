"""The agents in the memory store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.agents.entity import Agent


class MemoryAgentRepository(MemoryRepository[Agent]):
    noun = "agent"
    audited = Agent.audited

    async def get_many(self, organization_id: str, agent_ids: Sequence[str]) -> list[Agent]:
        found = [self.rows.get(agent_id) for agent_id in agent_ids]
        return [agent for agent in found if agent is not None and agent.organization_id == organization_id]

    async def list_by_teams(self, organization_id: str, team_ids: Sequence[str]) -> list[Agent]:
        wanted = set(team_ids)
        members = [
            agent
            for agent in self.rows.values()
            if agent.organization_id == organization_id and agent.team_id is not None and agent.team_id in wanted
        ]
        return sorted(members, key=lambda agent: (agent.created_at, agent.id))

    async def set_team(
        self,
        organization_id: str,
        agent_ids: Sequence[str],
        team_id: str | None,
        now: datetime,
        *,
        only_from: str | None = None,
    ) -> None:
        for agent in await self.get_many(organization_id, agent_ids):
            if only_from is None or agent.team_id == only_from:
                self.rows[agent.id] = replace(agent, team_id=team_id, updated_at=now)
