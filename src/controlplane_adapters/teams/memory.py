"""The teams in the memory store."""

from __future__ import annotations

from datetime import datetime

from controlplane_adapters.agents.memory import MemoryAgentRepository
from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.teams.entity import Team
from controlplane_domain.teams.usecases import set_member_in_steps


class MemoryTeamRepository(MemoryRepository[Team]):
    noun = "team"
    audited = Team.audited

    def __init__(self, rows: dict[str, Team], agents: MemoryAgentRepository) -> None:
        super().__init__(rows)
        self.agents = agents  # what a membership change writes besides the team

    async def set_member(
        self, organization_id: str, team_id: str, agent_id: str, member: bool, now: datetime
    ) -> tuple[Team | None, bool]:
        return await set_member_in_steps(self, self.agents, organization_id, team_id, agent_id, member, now)
