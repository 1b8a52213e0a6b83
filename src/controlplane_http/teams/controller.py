"""Teams: CRUD and membership; every response is a TeamWithAgentsResponse."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, delete, post
from litestar.params import FromPath
from litestar.types import Scope

from controlplane_domain.config import ExecutionEnvironment, TeamSettings
from controlplane_domain.skills.entity import AttachedSkill
from controlplane_domain.teams import usecases
from controlplane_domain.teams.entity import TeamView
from controlplane_http.agents.controller import agent_out
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, routes
from controlplane_http.handlers import ProjectFilter, caller, errors
from controlplane_http.signatures import Query
from controlplane_http.skills.controller import skill_out
from controlplane_wire.base import to_domain, to_wire
from controlplane_wire.configuration import ExecutionEnvironment as WireEnvironment
from controlplane_wire.configuration import TeamConfiguration, given_fields
from controlplane_wire.teams import TeamCreate, TeamList, TeamUpdate, TeamWithAgentsResponse


def team_out(view: TeamView) -> TeamWithAgentsResponse:
    team = view.team
    configuration = to_wire({**msgspec.to_builtins(team.settings), "member_ids": view.member_ids}, TeamConfiguration)
    environment = team.execution_environment
    return TeamWithAgentsResponse(
        id=team.id,
        organization_id=team.organization_id,
        name=team.name,
        description=team.description,
        status=team.status,
        runtime=team.runtime,
        configuration=configuration,
        created_at=team.created_at,
        updated_at=team.updated_at,
        projects=[{"id": project.id, "name": project.name, "key": project.key} for project in view.projects],
        skill_ids=team.skill_ids,
        skills=None if view.skills is None else [_skill_of_team(each) for each in view.skills],
        execution_environment=None if environment is None else to_wire(environment, WireEnvironment),
        agents=[agent_out(agent) for agent in view.members],
    )


def _skill_of_team(attached: AttachedSkill) -> dict[str, Any]:
    """A skill of the team with its details: the skill's own fields and the team's `configuration_override` of
    it (`GET /api/v1/teams/{team_id}/skills` lists the configuration merged)."""
    item: dict[str, Any] = msgspec.to_builtins(skill_out(attached.skill))
    item["configuration_override"] = attached.configuration_override
    return item


def create_command(data: TeamCreate) -> usecases.CreateTeam:
    """The create use case's command for a decoded creation payload (also a template's, see templates/)."""
    configuration = msgspec.to_builtins(data.configuration)
    member_ids = configuration.pop("member_ids")
    return usecases.CreateTeam(
        name=data.name,
        description=data.description,
        status=data.status,
        runtime=data.runtime,
        settings=to_domain(configuration, TeamSettings),
        member_ids=member_ids,
        skill_ids=data.skill_ids,
        execution_environment=(
            None if data.execution_environment is None else to_domain(data.execution_environment, ExecutionEnvironment)
        ),
    )


def _settings_changes(configuration: Any) -> dict[str, Any]:
    """The given configuration fields as domain values (nested configs become domain dataclasses)."""
    changes = given_fields(configuration)
    changes.pop("member_ids", None)
    settings = to_domain({**msgspec.to_builtins(TeamSettings()), **msgspec.to_builtins(changes)}, TeamSettings)
    return {name: getattr(settings, name) for name in changes}


def _update(data: TeamUpdate) -> usecases.UpdateTeam:
    changes = given_fields(data)
    configuration = changes.pop("configuration", None)
    if changes.get("execution_environment") is not None:
        changes["execution_environment"] = to_domain(changes["execution_environment"], ExecutionEnvironment)
    if configuration is not None:
        changes["settings_changes"] = _settings_changes(configuration)
        if configuration.member_ids is not msgspec.UNSET:
            changes["member_ids"] = list(configuration.member_ids)
    return usecases.UpdateTeam(**changes)


@routes(
    Resource("team", "Team", TeamWithAgentsResponse, TeamList, team_out),
    Create(usecases.create_team, body=TeamCreate, command=create_command, codes=(400, 409, 415)),
    Listing(usecases.list_teams, named=True, after=(Query("project_id", ProjectFilter),)),
    Read(usecases.get_team),
    Update(usecases.update_team, body=TeamUpdate, command=_update, codes=(400, 404, 409, 415)),
    Remove(usecases.delete_team),
)
class TeamController(Controller):
    path = "/api/v1/teams"
    tags = ["teams"]

    @post("/{team_id:str}/agents/{agent_id:str}", operation_id="addAgentToTeam", status_code=200, responses=errors(404))
    async def add_agent(self, team_id: FromPath[str], agent_id: FromPath[str], scope: Scope) -> TeamWithAgentsResponse:
        ports, principal = caller(scope)
        return team_out(await usecases.add_agent_to_team(ports, principal.organization_id, team_id, agent_id))

    @delete(
        "/{team_id:str}/agents/{agent_id:str}",
        operation_id="removeAgentFromTeam",
        status_code=200,
        responses=errors(404),
    )
    async def remove_agent(
        self, team_id: FromPath[str], agent_id: FromPath[str], scope: Scope
    ) -> TeamWithAgentsResponse:
        ports, principal = caller(scope)
        return team_out(await usecases.remove_agent_from_team(ports, principal.organization_id, team_id, agent_id))


AREA = HttpArea((TeamController,), visible={"team_id": usecases.get_team})
