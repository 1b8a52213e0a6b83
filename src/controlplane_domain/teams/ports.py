"""The teams' repository port (a unit of work's `teams`)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from controlplane_domain.paging import PageRequest
from controlplane_domain.teams.entity import Team


class TeamRepository(Protocol):
    async def add(self, team: Team) -> None: ...

    async def get(self, organization_id: str, team_id: str, *, for_update: bool = False) -> Team | None: ...

    async def update(self, team: Team) -> None: ...

    async def delete(self, organization_id: str, team_id: str) -> None: ...

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Team], int]: ...

    async def set_member(
        self, organization_id: str, team_id: str, agent_id: str, member: bool, now: datetime
    ) -> tuple[Team | None, bool]:
        """Move the agent into the team (`member`) or out of it to no team, unless it is there already (the team's
        `updated_at`, the agent's `team_id` and `updated_at` set to `now`): the team as it is after (None: no such
        team) and whether the agent exists; nothing is written unless both do. The team's row is locked before the
        agent's, as every membership change locks them."""
