"""In-memory repositories over plain dicts, scoped by organization like the SQL ones."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TypeVar

from controlplane_domain.agents import Agent
from controlplane_domain.api_keys import ApiKey
from controlplane_domain.errors import Conflict
from controlplane_domain.idempotency import IdempotencyRecord
from controlplane_domain.llm_models import LlmModel
from controlplane_domain.organizations import OrganizationSettings
from controlplane_domain.paging import PageRequest
from controlplane_domain.teams import Team
from controlplane_domain.workers import Worker

T = TypeVar("T")


def _page(items: Iterable[T], key: Callable[[T], tuple[datetime, str]], page: PageRequest) -> tuple[list[T], int]:
    ordered = sorted(items, key=key)
    return ordered[page.offset : page.offset + page.limit], len(ordered)


class MemoryAgentRepository:
    def __init__(self, rows: dict[str, Agent]) -> None:
        self.rows = rows

    def _check_unique(self, agent: Agent) -> None:
        for other in self.rows.values():
            if other.organization_id == agent.organization_id and other.name == agent.name and other.id != agent.id:
                raise Conflict(f"an agent named '{agent.name}' already exists", {"field": "name"})

    async def add(self, agent: Agent) -> None:
        self._check_unique(agent)
        self.rows[agent.id] = agent

    async def get(self, organization_id: str, agent_id: str) -> Agent | None:
        agent = self.rows.get(agent_id)
        return agent if agent is not None and agent.organization_id == organization_id else None

    async def get_many(self, organization_id: str, agent_ids: Sequence[str]) -> list[Agent]:
        found = [self.rows.get(agent_id) for agent_id in agent_ids]
        return [agent for agent in found if agent is not None and agent.organization_id == organization_id]

    async def update(self, agent: Agent) -> None:
        self._check_unique(agent)
        self.rows[agent.id] = agent

    async def delete(self, organization_id: str, agent_id: str) -> None:
        if await self.get(organization_id, agent_id) is not None:
            del self.rows[agent_id]

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Agent], int]:
        mine = (agent for agent in self.rows.values() if agent.organization_id == organization_id)
        return _page(mine, lambda agent: (agent.created_at, agent.id), page)

    async def list_by_teams(self, organization_id: str, team_ids: Sequence[str]) -> list[Agent]:
        wanted = set(team_ids)
        members = [
            agent
            for agent in self.rows.values()
            if agent.organization_id == organization_id and agent.team_id is not None and agent.team_id in wanted
        ]
        return sorted(members, key=lambda agent: (agent.created_at, agent.id))

    async def set_team(
        self, organization_id: str, agent_ids: Sequence[str], team_id: str | None, now: datetime
    ) -> None:
        for agent in await self.get_many(organization_id, agent_ids):
            self.rows[agent.id] = replace(agent, team_id=team_id, updated_at=now)


class MemoryTeamRepository:
    def __init__(self, rows: dict[str, Team]) -> None:
        self.rows = rows

    def _check_unique(self, team: Team) -> None:
        for other in self.rows.values():
            if other.organization_id == team.organization_id and other.name == team.name and other.id != team.id:
                raise Conflict(f"a team named '{team.name}' already exists", {"field": "name"})

    async def add(self, team: Team) -> None:
        self._check_unique(team)
        self.rows[team.id] = team

    async def get(self, organization_id: str, team_id: str) -> Team | None:
        team = self.rows.get(team_id)
        return team if team is not None and team.organization_id == organization_id else None

    async def update(self, team: Team) -> None:
        self._check_unique(team)
        self.rows[team.id] = team

    async def delete(self, organization_id: str, team_id: str) -> None:
        if await self.get(organization_id, team_id) is not None:
            del self.rows[team_id]

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Team], int]:
        mine = (team for team in self.rows.values() if team.organization_id == organization_id)
        return _page(mine, lambda team: (team.created_at, team.id), page)


class MemoryWorkerRepository:
    def __init__(self, rows: dict[tuple[str, str], Worker]) -> None:
        self.rows = rows

    async def get(self, organization_id: str, worker_id: str) -> Worker | None:
        return self.rows.get((organization_id, worker_id))

    async def save(self, worker: Worker) -> None:
        self.rows[(worker.organization_id, worker.worker_id)] = worker

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Worker], int]:
        mine = (worker for (org, _), worker in self.rows.items() if org == organization_id)
        return _page(mine, lambda worker: (worker.registered_at, worker.worker_id), page)


class MemoryModelRepository:
    def __init__(self, rows: dict[str, LlmModel]) -> None:
        self.rows = rows

    def _check_unique(self, model: LlmModel) -> None:
        for other in self.rows.values():
            if other.organization_id == model.organization_id and other.value == model.value and other.id != model.id:
                raise Conflict(f"a model with value '{model.value}' already exists", {"field": "value"})

    async def add(self, model: LlmModel) -> None:
        self._check_unique(model)
        self.rows[model.id] = model

    async def get(self, organization_id: str, model_id: str) -> LlmModel | None:
        model = self.rows.get(model_id)
        return model if model is not None and model.organization_id == organization_id else None

    async def update(self, model: LlmModel) -> None:
        self._check_unique(model)
        self.rows[model.id] = model

    async def delete(self, organization_id: str, model_id: str) -> None:
        if await self.get(organization_id, model_id) is not None:
            del self.rows[model_id]

    async def list_page(
        self, organization_id: str, page: PageRequest, *, enabled_only: bool = False
    ) -> tuple[list[LlmModel], int]:
        mine = (
            model
            for model in self.rows.values()
            if model.organization_id == organization_id and (model.enabled or not enabled_only)
        )
        return _page(mine, lambda model: (model.created_at, model.id), page)


class MemoryApiKeyRepository:
    def __init__(self, rows: dict[str, ApiKey]) -> None:
        self.rows = rows

    async def add(self, key: ApiKey) -> None:
        if key.id in self.rows:
            raise Conflict("api key id collision")
        self.rows[key.id] = key

    async def get(self, organization_id: str, key_id: str) -> ApiKey | None:
        key = self.rows.get(key_id)
        return key if key is not None and key.organization_id == organization_id else None

    async def find_for_authentication(self, key_id: str) -> ApiKey | None:
        return self.rows.get(key_id)

    async def update(self, key: ApiKey) -> None:
        self.rows[key.id] = key

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[ApiKey], int]:
        mine = (key for key in self.rows.values() if key.organization_id == organization_id)
        return _page(mine, lambda key: (key.created_at, key.id), page)


class MemoryOrganizationRepository:
    def __init__(self, rows: dict[str, OrganizationSettings]) -> None:
        self.rows = rows

    async def get_settings(self, organization_id: str) -> OrganizationSettings | None:
        return self.rows.get(organization_id)

    async def save_settings(self, settings: OrganizationSettings) -> None:
        self.rows[settings.organization_id] = settings


class MemoryIdempotencyRepository:
    def __init__(self, rows: dict[tuple[str, str], IdempotencyRecord]) -> None:
        self.rows = rows

    async def get(self, organization_id: str, key: str) -> IdempotencyRecord | None:
        return self.rows.get((organization_id, key))

    async def add(self, record: IdempotencyRecord) -> None:
        if (record.organization_id, record.key) in self.rows:
            raise Conflict("idempotency key in use")
        self.rows[(record.organization_id, record.key)] = record

    async def save(self, record: IdempotencyRecord) -> None:
        self.rows[(record.organization_id, record.key)] = record

    async def delete(self, organization_id: str, key: str) -> None:
        self.rows.pop((organization_id, key), None)
