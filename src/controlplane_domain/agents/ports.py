"""The agents' repository port (a unit of work's `agents`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from controlplane_domain.agents.entity import Agent
from controlplane_domain.paging import PageRequest


class AgentRepository(Protocol):
    async def add(self, agent: Agent) -> None:
        """Store a new agent; Conflict when its name is taken in the organization."""

    async def get(self, organization_id: str, agent_id: str, *, for_update: bool = False) -> Agent | None:
        """With `for_update`, the row stays locked until the unit of work ends (or the store
        serializes writers): a change read this way cannot be lost to, or outlive, a concurrent one. The same
        holds for every repository's `get(..., for_update=True)`."""

    async def get_many(self, organization_id: str, agent_ids: Sequence[str]) -> list[Agent]: ...

    async def update(self, agent: Agent) -> None:
        """Replace a stored agent; Conflict when its new name is taken."""

    async def delete(self, organization_id: str, agent_id: str) -> None: ...

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Agent], int]: ...

    async def list_by_teams(self, organization_id: str, team_ids: Sequence[str]) -> list[Agent]:
        """Members of the given teams, ordered by (created_at, id)."""

    async def set_team(
        self,
        organization_id: str,
        agent_ids: Sequence[str],
        team_id: str | None,
        now: datetime,
        *,
        only_from: str | None = None,
    ) -> None:
        """Point the given agents at `team_id` (None removes them from any team). `only_from`: only those still in
        that team once their rows are locked (a removal never undoes a concurrent move to another team)."""
