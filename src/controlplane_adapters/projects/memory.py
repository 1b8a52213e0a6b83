"""Projects in the memory store: the projects, and the agents and teams each holds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Self

from controlplane_adapters.memory.base import MemoryRepository, sorted_page
from controlplane_domain.agents.entity import Agent
from controlplane_domain.paging import PageRequest
from controlplane_domain.projects.entity import MemberKind, Project, ProjectCounts
from controlplane_domain.teams.entity import Team

if TYPE_CHECKING:
    from controlplane_adapters.memory.store import MemoryUnitOfWork

Memberships = dict[tuple[str, str, str], datetime]
"""(project id, kind, member id) -> when it joined."""


class MemoryProjectRepository(MemoryRepository[Project]):
    noun = "project"
    audited = Project.audited
    unique_fields = ("name", "key")

    @classmethod
    def on(cls, unit: MemoryUnitOfWork) -> Self:
        """The repository of a memory unit of work (`areas.py`)."""
        return cls(
            unit.table("projects"),
            unit.table("project_members"),
            agents=unit.table("agents"),
            teams=unit.table("teams"),
        )

    def __init__(
        self, rows: dict[str, Project], members: Memberships, *, agents: Mapping[str, Agent], teams: Mapping[str, Team]
    ) -> None:
        super().__init__(rows)
        self.members = members
        self.agents, self.teams = agents, teams
        self._exists: dict[MemberKind, Mapping[str, Any]] = {MemberKind.AGENT: agents, MemberKind.TEAM: teams}

    def member_ids(self, kind: MemberKind, project_id: str) -> set[str]:
        alive = self._exists[kind]
        return {member for (project, what, member) in self.members if project == project_id and what == kind
                and member in alive}  # fmt: skip

    async def delete(self, organization_id: str, object_id: str) -> None:
        if await self.get(organization_id, object_id) is not None:
            await super().delete(organization_id, object_id)  # the row, and its audit event
            for key in [key for key in self.members if key[0] == object_id]:
                del self.members[key]

    async def counts(self, organization_id: str, project_ids: Sequence[str]) -> dict[str, ProjectCounts]:
        return {
            project_id: ProjectCounts(
                len(self.member_ids(MemberKind.AGENT, project_id)), len(self.member_ids(MemberKind.TEAM, project_id))
            )
            for project_id in project_ids
            if project_id in self.rows and self.rows[project_id].organization_id == organization_id
        }

    async def set_member(
        self, organization_id: str, project_id: str, kind: MemberKind, member_id: str, member: bool, now: datetime
    ) -> None:
        key = (project_id, kind.value, member_id)
        if member:
            self.members.setdefault(key, now)
        else:
            self.members.pop(key, None)

    async def of_teams(self, organization_id: str, team_ids: Sequence[str]) -> dict[str, list[Project]]:
        return await self._of_members(organization_id, MemberKind.TEAM, team_ids)

    async def _of_members(
        self, organization_id: str, kind: MemberKind, member_ids: Sequence[str]
    ) -> dict[str, list[Project]]:
        asked, alive = set(member_ids), self._exists[kind]
        found: dict[str, list[Project]] = {}
        held = sorted(
            ((self.rows[project_id], member) for (project_id, what, member) in self.members
             if what == kind.value and member in asked and member in alive and project_id in self.rows),
            key=lambda pair: (pair[0].created_at, pair[0].id),
        )  # fmt: skip
        for project, member in held:
            if project.organization_id == organization_id:
                found.setdefault(member, []).append(project)
        return found

    async def agent_page(self, organization_id: str, project_id: str, page: PageRequest) -> tuple[list[Agent], int]:
        held = [self.agents[agent_id] for agent_id in self.member_ids(MemberKind.AGENT, project_id)]
        mine = (agent for agent in held if agent.organization_id == organization_id)
        return sorted_page(mine, lambda agent: (agent.created_at, agent.id), page)

    async def team_page(self, organization_id: str, project_id: str, page: PageRequest) -> tuple[list[Team], int]:
        held = [self.teams[team_id] for team_id in self.member_ids(MemberKind.TEAM, project_id)]
        mine = (team for team in held if team.organization_id == organization_id)
        return sorted_page(mine, lambda team: (team.created_at, team.id), page)
