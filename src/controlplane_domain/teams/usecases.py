"""Team use cases; membership is always written through the agents' `team_id`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

from controlplane_domain import crud
from controlplane_domain.agents.entity import Agent
from controlplane_domain.agents.ports import AgentRepository
from controlplane_domain.audit.usecases import record
from controlplane_domain.config import (
    ExecutionEnvironment,
    TeamSettings,
    check_execution_environment,
    check_team_settings,
)
from controlplane_domain.crud import Area
from controlplane_domain.errors import NotFound, ValidationFailed
from controlplane_domain.integrations.references import check_environment_references
from controlplane_domain.names import check_name
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.references import Dangling, Kind, Target, check_unreferenced
from controlplane_domain.retry import retry_transient
from controlplane_domain.runtimes import DEFAULT_RUNTIME, require_supported_runtime
from controlplane_domain.skills.attachments import attached_to_many, check_skill_ids, sync_attachments
from controlplane_domain.skills.entity import SkillOwner
from controlplane_domain.teams.entity import Team, TeamStatus, TeamView
from controlplane_domain.teams.ports import TeamRepository

MEMBER_IDS_FIELD = "configuration.member_ids"
_SETTINGS_FIELDS = frozenset(f.name for f in fields(TeamSettings))
_COMMAND_ONLY = ("member_ids", "settings_changes")
"""An update's fields the team has not: its membership (the agents') and the changes its `settings` merge."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTeam:
    name: str
    description: str | None = None
    status: TeamStatus = TeamStatus.ACTIVE
    runtime: str = DEFAULT_RUNTIME
    settings: TeamSettings = field(default_factory=TeamSettings)
    member_ids: list[str] = field(default_factory=list)
    skill_ids: list[str] | None = None
    execution_environment: ExecutionEnvironment | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateTeam:
    name: str | Unset = UNSET
    description: str | Unset | None = UNSET
    status: TeamStatus | Unset = UNSET
    runtime: str | Unset = UNSET
    settings_changes: Mapping[str, Any] = field(default_factory=dict)
    member_ids: list[str] | Unset = UNSET
    skill_ids: list[str] | Unset | None = UNSET
    execution_environment: ExecutionEnvironment | Unset | None = UNSET


def _check_team(team: Team) -> None:
    check_name("name", team.name)
    require_supported_runtime("runtime", team.runtime)
    check_team_settings("configuration", team.settings)
    if team.execution_environment is not None:
        check_execution_environment("execution_environment", team.execution_environment)


TEAMS = Area("team", lambda uow: uow.teams)


async def require_team(uow: UnitOfWork, organization_id: str, team_id: str, *, lock: bool = False) -> Team:
    """The team of this organization, or NotFound; `lock`: locked until the unit of work ends (a change's read)."""
    return await crud.require(TEAMS, uow, organization_id, team_id, lock=lock)


async def _view(uow: UnitOfWork, team: Team) -> TeamView:
    return (await _views(uow, team.organization_id, [team]))[0]


async def _views(uow: UnitOfWork, organization_id: str, teams: Sequence[Team]) -> list[TeamView]:
    """The teams with their members, projects and skills: one read a relation whatever the number of teams (none
    for the skills when no team has any)."""
    if not teams:
        return []
    ids = [team.id for team in teams]
    members: dict[str, list[Agent]] = {team_id: [] for team_id in ids}
    for agent in await uow.agents.list_by_teams(organization_id, ids):
        members[agent.team_id or ""].append(agent)
    projects = await uow.projects.of_teams(organization_id, ids)
    with_skills = {team.id: team.skill_ids for team in teams if team.skill_ids is not None}
    skills = await attached_to_many(uow, organization_id, SkillOwner.TEAM, with_skills)
    return [TeamView(team, members[team.id], projects.get(team.id, ()), skills.get(team.id)) for team in teams]


async def _set_members(ports: Ports, uow: UnitOfWork, team: Team, member_ids: Sequence[str]) -> None:
    """Make exactly `member_ids` the team's members: others leave, newcomers move in from any team."""
    wanted = list(dict.fromkeys(member_ids))
    found = {agent.id for agent in await uow.agents.get_many(team.organization_id, wanted)}
    missing = [agent_id for agent_id in wanted if agent_id not in found]
    if missing:
        raise ValidationFailed(MEMBER_IDS_FIELD, f"unknown agent id(s): {', '.join(missing)}")
    now = ports.clock.now()
    current = await uow.agents.list_by_teams(team.organization_id, [team.id])
    leaving = [agent.id for agent in current if agent.id not in set(wanted)]
    current_ids = {agent.id for agent in current}
    joining = [agent_id for agent_id in wanted if agent_id not in current_ids]
    if leaving:  # only those still here once locked: a concurrent move elsewhere stands
        await uow.agents.set_team(team.organization_id, leaving, None, now, only_from=team.id)
    if joining:
        await uow.agents.set_team(team.organization_id, joining, team.id, now)


@retry_transient
async def create_team(ports: Ports, organization_id: str, command: CreateTeam) -> TeamView:
    """Create a team; agents named in `member_ids` move into it."""
    team = crud.new(Team, ports, organization_id, command, omit=("member_ids",))
    _check_team(team)
    async with ports.uow() as uow:
        await check_environment_references(uow, organization_id, team.execution_environment)
        if team.skill_ids:  # the skills named exist; each is attached (skills/attachments.py)
            team = replace(team, skill_ids=await check_skill_ids(uow, organization_id, team.skill_ids, "skill_ids"))
        await uow.teams.add(team)
        if team.skill_ids:
            await sync_attachments(uow, organization_id, SkillOwner.TEAM, team.id, team.skill_ids, team.created_at)
        await _set_members(ports, uow, team, command.member_ids)
        view = await _view(uow, team)
        await uow.commit()
    return view


async def get_team(ports: Ports, organization_id: str, team_id: str) -> TeamView:
    async with ports.read() as uow:
        return await _view(uow, await require_team(uow, organization_id, team_id))


async def list_teams(
    ports: Ports, organization_id: str, page: PageRequest, *, project_id: str | None = None
) -> Page[TeamView]:
    """A page of teams (all, or those a project holds) with their members, projects and skills (`_views`): a few
    queries whatever the page size."""
    async with ports.read() as uow:
        if project_id is None:
            teams, total = await uow.teams.list_page(organization_id, page)
        else:
            teams, total = await uow.projects.team_page(organization_id, project_id, page)
        views = await _views(uow, organization_id, teams)
    return Page(items=views, total=total, limit=page.limit, offset=page.offset)


@retry_transient
async def update_team(ports: Ports, organization_id: str, team_id: str, command: UpdateTeam) -> TeamView:
    """Change the given fields; configuration fields merge; `member_ids` replaces the membership."""
    unknown = set(command.settings_changes) - _SETTINGS_FIELDS
    if unknown:
        raise ValidationFailed(("configuration", sorted(unknown)[0]), "unknown configuration field")
    async with ports.uow() as uow:
        team = await require_team(uow, organization_id, team_id, lock=True)
        settings = replace(team.settings, **command.settings_changes)
        updated = crud.patched(team, command, ports.clock.now(), _COMMAND_ONLY, settings=settings)
        _check_team(updated)
        if updated.skill_ids != team.skill_ids and updated.skill_ids is not None:
            updated = replace(
                updated, skill_ids=await check_skill_ids(uow, organization_id, updated.skill_ids, "skill_ids")
            )
        if updated.skill_ids != team.skill_ids:
            kept = updated.skill_ids or []
            await sync_attachments(uow, organization_id, SkillOwner.TEAM, team.id, kept, updated.updated_at)
        if command.execution_environment is not UNSET:
            await check_environment_references(uow, organization_id, updated.execution_environment)
        await uow.teams.update(updated)
        if command.member_ids is not UNSET:
            await _set_members(ports, uow, updated, command.member_ids)
        view = await _view(uow, updated)
        await uow.commit()
    return view


@retry_transient
async def delete_team(ports: Ports, organization_id: str, team_id: str, *, force: bool = False) -> Dangling:
    """Delete a team. Members, jobs and workflow steps naming it: 409 IN_USE; with `force` its members stay, with
    no team, and the jobs and steps are left naming nothing (references.py)."""
    async with ports.uow() as uow:
        team = await require_team(uow, organization_id, team_id, lock=True)
        dangling = await check_unreferenced(uow, organization_id, Target(Kind.TEAM, team_id), force=force)
        members = await uow.agents.list_by_teams(organization_id, [team.id])
        await uow.teams.delete(organization_id, team_id)
        if members:  # (SQL stores: the foreign key's ON DELETE SET NULL did it already, on the rows as locked)
            ids = [agent.id for agent in members]
            await uow.agents.set_team(organization_id, ids, None, ports.clock.now(), only_from=team.id)
        await uow.commit()
    return Dangling(tuple(r for r in dangling.referrers if r.type != "agent"), dangling.more)


@retry_transient
async def add_agent_to_team(ports: Ports, organization_id: str, team_id: str, agent_id: str) -> TeamView:
    """Set the agent's `team_id` to this team (moving it from any other); adding twice changes nothing."""
    return await _set_member(ports, organization_id, team_id, agent_id, member=True)


@retry_transient
async def remove_agent_from_team(ports: Ports, organization_id: str, team_id: str, agent_id: str) -> TeamView:
    """Take the agent out of this team; an agent that is not a member is left as it is."""
    return await _set_member(ports, organization_id, team_id, agent_id, member=False)


async def _set_member(ports: Ports, organization_id: str, team_id: str, agent_id: str, *, member: bool) -> TeamView:
    async with ports.uow() as uow:
        now = ports.clock.now()
        team, agent_found = await uow.teams.set_member(organization_id, team_id, agent_id, member, now)
        if team is None:
            raise NotFound("team", team_id)
        if not agent_found:
            raise NotFound("agent", agent_id)
        await record(
            uow,
            organization_id=organization_id,
            action="team.add_agent" if member else "team.remove_agent",
            resource_type="team",
            resource_id=team_id,
            details={"agent_id": agent_id},
        )
        view = await _view(uow, team)
        await uow.commit()
    return view


async def set_member_in_steps(
    teams: TeamRepository,
    agents: AgentRepository,
    organization_id: str,
    team_id: str,
    agent_id: str,
    member: bool,
    now: datetime,
) -> tuple[Team | None, bool]:
    """`TeamRepository.set_member`, the membership rule of every store: the team's row read locked, then the
    agent's (the one lock order of every membership change; a change that waited for a lock reads the rows as
    committed), then the move decided here and written."""
    team = await teams.get(organization_id, team_id, for_update=True)
    agent = await agents.get(organization_id, agent_id, for_update=True)
    if team is None or agent is None:
        return team, agent is not None
    if (agent.team_id == team.id) != member:
        team = replace(team, updated_at=now)
        await teams.update(team)  # the team row first, then agents: one lock order everywhere
        await agents.set_team(organization_id, [agent.id], team.id if member else None, now)
    return team, True
