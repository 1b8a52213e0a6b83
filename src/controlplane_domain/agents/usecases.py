"""Agent use cases."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from controlplane_domain import crud
from controlplane_domain.agents.entity import Agent, AgentStatus
from controlplane_domain.config import ExecutionEnvironment, JSONObject, check_execution_environment
from controlplane_domain.crud import Area
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.integrations.references import check_environment_references
from controlplane_domain.names import check_name
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.references import Dangling, Kind
from controlplane_domain.retry import retry_transient
from controlplane_domain.runtimes import DEFAULT_RUNTIME, require_supported_runtime
from controlplane_domain.skills.attachments import check_skill_ids, sync_attachments
from controlplane_domain.skills.entity import SkillOwner


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateAgent:
    name: str
    description: str | None = None
    status: AgentStatus = AgentStatus.ACTIVE
    runtime: str = DEFAULT_RUNTIME
    model_id: str | None = None
    system_prompt: str | None = None
    team_id: str | None = None
    capabilities: list[str] = field(default_factory=list)
    skill_ids: list[str] = field(default_factory=list)
    execution_environment: ExecutionEnvironment | None = None
    configuration: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateAgent:
    name: str | Unset = UNSET
    description: str | Unset | None = UNSET
    status: AgentStatus | Unset = UNSET
    runtime: str | Unset = UNSET
    model_id: str | Unset | None = UNSET
    system_prompt: str | Unset | None = UNSET
    team_id: str | Unset | None = UNSET
    capabilities: list[str] | Unset = UNSET
    skill_ids: list[str] | Unset = UNSET
    execution_environment: ExecutionEnvironment | Unset | None = UNSET
    configuration: JSONObject | Unset = UNSET


AGENTS = Area("agent", lambda uow: uow.agents, Kind.AGENT)


async def require_agent(uow: UnitOfWork, organization_id: str, agent_id: str, *, lock: bool = False) -> Agent:
    """The agent of this organization, or NotFound; `lock`: locked until the unit of work ends (a change's read)."""
    return await crud.require(AGENTS, uow, organization_id, agent_id, lock=lock)


async def _check_team_reference(uow: UnitOfWork, organization_id: str, team_id: str | None) -> None:
    if team_id is not None and await uow.teams.get(organization_id, team_id) is None:
        raise ValidationFailed("team_id", f"team '{team_id}' does not exist")


def _check_agent(agent: Agent) -> None:
    check_name("name", agent.name)
    require_supported_runtime("runtime", agent.runtime)
    if agent.execution_environment is not None:
        check_execution_environment("execution_environment", agent.execution_environment)


@retry_transient
async def create_agent(ports: Ports, organization_id: str, command: CreateAgent) -> Agent:
    """Create an agent, optionally already in a team of the same organization."""
    agent = crud.new(Agent, ports, organization_id, command)
    _check_agent(agent)
    async with ports.uow() as uow:
        await _check_team_reference(uow, organization_id, agent.team_id)
        await check_environment_references(uow, organization_id, agent.execution_environment)
        if not agent.skill_ids:
            await uow.commit_with(lambda: uow.agents.add(agent))  # the create's one write
        else:  # the skills named exist; each is attached (skills/attachments.py)
            agent = replace(agent, skill_ids=await check_skill_ids(uow, organization_id, agent.skill_ids, "skill_ids"))
            await uow.agents.add(agent)
            await sync_attachments(uow, organization_id, SkillOwner.AGENT, agent.id, agent.skill_ids, agent.created_at)
            await uow.commit()
    return agent


async def get_agent(ports: Ports, organization_id: str, agent_id: str) -> Agent:
    return await crud.get(AGENTS, ports, organization_id, agent_id)


async def list_agents(
    ports: Ports, organization_id: str, page: PageRequest, *, project_id: str | None = None
) -> Page[Agent]:
    """A page of the organization's agents, or of those a project holds (none for an unknown project)."""
    async with ports.read() as uow:
        if project_id is None:
            items, total = await uow.agents.list_page(organization_id, page)
        else:
            items, total = await uow.projects.agent_page(organization_id, project_id, page)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


@retry_transient
async def update_agent(ports: Ports, organization_id: str, agent_id: str, command: UpdateAgent) -> Agent:
    """Change the given fields; a new `team_id` moves the agent, null takes it out of its team; `skill_ids` must
    name skills of the organization and replaces the agent's attachments (the overrides of those kept stay)."""
    async with ports.uow() as uow:
        agent = await require_agent(uow, organization_id, agent_id, lock=True)
        updated = crud.patched(agent, command, ports.clock.now())
        _check_agent(updated)
        if updated.team_id != agent.team_id:
            await _check_team_reference(uow, organization_id, updated.team_id)
        if updated.skill_ids != agent.skill_ids:  # the skills named exist; attachments follow (skills/attachments.py)
            updated = replace(
                updated, skill_ids=await check_skill_ids(uow, organization_id, updated.skill_ids, "skill_ids")
            )
            await sync_attachments(
                uow, organization_id, SkillOwner.AGENT, agent.id, updated.skill_ids, updated.updated_at
            )
        if command.execution_environment is not UNSET:  # only a given environment: a rename never trips on it
            await check_environment_references(uow, organization_id, updated.execution_environment)
        await uow.agents.update(updated)
        await uow.commit()
    return updated


@retry_transient
async def delete_agent(ports: Ports, organization_id: str, agent_id: str, *, force: bool = False) -> Dangling:
    """Delete an agent; its team simply no longer lists it (membership lives on the agent), nor do its projects.
    Jobs and workflow steps naming it: 409 IN_USE, or with `force` left naming nothing (references.py)."""
    return await crud.delete(AGENTS, ports, organization_id, agent_id, force=force)
