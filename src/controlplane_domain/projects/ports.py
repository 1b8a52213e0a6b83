"""What the projects area needs from a store."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from controlplane_domain.agents.entity import Agent
from controlplane_domain.paging import PageRequest
from controlplane_domain.projects.entity import MemberKind, Project, ProjectCounts
from controlplane_domain.repository import Repository
from controlplane_domain.teams.entity import Team


class ProjectRepository(Repository[Project], Protocol):
    async def add(self, project: Project) -> None:
        """Store a new project; Conflict when its name or key is taken in the organization."""

    async def update(self, project: Project) -> None:
        """Replace a stored project; Conflict when its new name or key is taken."""

    async def delete(self, organization_id: str, project_id: str) -> None:
        """Delete the project and its memberships (never the agents or teams)."""

    async def counts(self, organization_id: str, project_ids: Sequence[str]) -> dict[str, ProjectCounts]:
        """Agents and teams each project holds (only existing ones); projects without members may be missing."""

    async def set_member(
        self, organization_id: str, project_id: str, kind: MemberKind, member_id: str, member: bool, now: datetime
    ) -> None:
        """Add (`member`) or remove the agent or team; adding twice or removing what is absent changes nothing."""

    async def of_teams(self, organization_id: str, team_ids: Sequence[str]) -> dict[str, list[Project]]:
        """The projects each of these teams belongs to, in the projects' order (created_at, id); a team of none is
        left out. One read, whatever the number of teams."""

    async def agent_page(self, organization_id: str, project_id: str, page: PageRequest) -> tuple[list[Agent], int]:
        """A page of the agents the project holds, in (created_at, id) order, and their total."""

    async def team_page(self, organization_id: str, project_id: str, page: PageRequest) -> tuple[list[Team], int]:
        """A page of the teams the project holds, in (created_at, id) order, and their total."""
