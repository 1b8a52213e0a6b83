"""A template's body as what it stands for: the agents' or teams' creation payload, decoded and created exactly
as POST /api/v1/agents and /api/v1/teams do (same wire types, same commands, same use cases)."""

from __future__ import annotations

from typing import Any

import msgspec

from controlplane_domain.agents import usecases as agents
from controlplane_domain.config import JSONObject
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.ports import Ports
from controlplane_domain.teams import usecases as teams
from controlplane_domain.templates.entity import TemplateKind
from controlplane_http.agents.controller import agent_out
from controlplane_http.agents.wire import Agent, AgentCreate
from controlplane_http.errors import _msgspec_loc as msgspec_loc
from controlplane_http.teams.controller import create_command, team_out
from controlplane_http.teams.wire import TeamCreate, TeamWithAgentsResponse
from controlplane_http.wire import to_domain


def _command(kind: TemplateKind, body: JSONObject) -> Any:
    """The create use case's command, as the create route builds it; msgspec.ValidationError as it would be."""
    if kind is TemplateKind.AGENT:
        return to_domain(msgspec.convert(body, AgentCreate, strict=True), agents.CreateAgent)
    return create_command(msgspec.convert(body, TeamCreate, strict=True))


def check_body(kind: TemplateKind, body: JSONObject) -> None:
    """The templates' BodyCheck: the body decodes as the kind's creation payload; else the field, dotted."""
    try:
        _command(kind, body)
    except msgspec.ValidationError as exc:
        loc, message = msgspec_loc(exc)
        raise ValidationFailed(".".join(str(part) for part in loc[1:]), message) from exc


async def create(
    ports: Ports, organization_id: str, kind: TemplateKind, body: JSONObject
) -> Agent | TeamWithAgentsResponse:
    """Create the agent or team: the answer of POST /api/v1/agents or /teams for this body, errors included."""
    command = _command(kind, body)
    if kind is TemplateKind.AGENT:
        return agent_out(await agents.create_agent(ports, organization_id, command))
    return team_out(await teams.create_team(ports, organization_id, command))
