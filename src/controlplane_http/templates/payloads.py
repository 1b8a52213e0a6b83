"""A template's body as what it stands for: the agents' or teams' creation payload, decoded and created exactly
as POST /api/v1/agents and /api/v1/teams do (same wire types, same commands, same use cases)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import msgspec.inspect as types

from controlplane_domain.agents import usecases as agents
from controlplane_domain.config import JSONObject
from controlplane_domain.errors import TooLarge, ValidationFailed
from controlplane_domain.ports import Ports
from controlplane_domain.teams import usecases as teams
from controlplane_domain.templates.entity import TemplateKind
from controlplane_domain.templates.placeholders import Path
from controlplane_domain.templates.rules import CANDIDATES
from controlplane_http.agents.controller import agent_out
from controlplane_http.errors import _msgspec_loc as msgspec_loc
from controlplane_http.teams.controller import create_command, team_out
from controlplane_wire.agents import Agent, AgentCreate
from controlplane_wire.base import to_domain
from controlplane_wire.teams import TeamCreate, TeamWithAgentsResponse


def _command(kind: TemplateKind, body: JSONObject) -> Any:
    """The create use case's command, as the create route builds it; msgspec.ValidationError as it would be."""
    if kind is TemplateKind.AGENT:
        return to_domain(msgspec.convert(body, AgentCreate, strict=True), agents.CreateAgent)
    return create_command(msgspec.convert(body, TeamCreate, strict=True))


_PAYLOADS: dict[TemplateKind, types.Type] = {
    TemplateKind.AGENT: types.type_info(AgentCreate),
    TemplateKind.TEAM: types.type_info(TeamCreate),
}
_LISTS = (types.ListType, types.SetType, types.FrozenSetType, types.VarTupleType, types.TupleType)
_OBJECTS = (types.DictType, types.StructType, types.TypedDictType, types.DataclassType)


def _alternatives(kind: types.Type) -> list[types.Type]:
    if isinstance(kind, types.Metadata):
        return _alternatives(kind.type)
    if isinstance(kind, types.UnionType):
        return [each for member in kind.types for each in _alternatives(member)]
    return [kind]


def _inside(kind: types.Type, part: str | int) -> list[types.Type]:
    """The types a payload's type takes at one more step of a path (a field, a key, an index)."""
    found: list[types.Type] = []
    for each in _alternatives(kind):
        if isinstance(each, types.StructType | types.TypedDictType | types.DataclassType):
            found += [field.type for field in each.fields if field.encode_name == part]
        elif isinstance(each, types.DictType) and isinstance(part, str):
            found.append(each.value_type)
        elif isinstance(each, types.ListType | types.VarTupleType | types.SetType | types.FrozenSetType):
            found.append(each.item_type)
        elif isinstance(each, types.TupleType) and isinstance(part, int) and part < len(each.item_types):
            found.append(each.item_types[part])
        elif isinstance(each, types.AnyType):
            found.append(each)
    return found


def _takes(kind: types.Type, value: Any) -> bool:
    """Whether a JSON value is of the type's JSON type (its constraints aside)."""
    if isinstance(kind, types.AnyType):
        return True
    if isinstance(kind, types.StrType):
        return isinstance(value, str)
    if isinstance(kind, types.BoolType):
        return isinstance(value, bool)
    if isinstance(kind, types.IntType):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(kind, types.FloatType):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(kind, types.NoneType):
        return value is None
    if isinstance(kind, _LISTS):
        return isinstance(value, list)
    if isinstance(kind, _OBJECTS):
        return isinstance(value, dict)
    return False


def candidates(kind: TemplateKind, path: Path) -> Sequence[Any]:
    """The templates' Candidates: the CANDIDATES of the JSON types the kind's creation payload takes at `path`
    (each step of the path walked once), in their order; all of them when the payload's type says nothing."""
    found = [_PAYLOADS[kind]]
    for part in path:
        found = [each for kind_ in found for each in _inside(kind_, part)]
    leaves = [each for kind_ in found for each in _alternatives(kind_)]
    chosen = [value for value in CANDIDATES if any(_takes(leaf, value) for leaf in leaves)]
    return chosen or CANDIDATES


def check_body(kind: TemplateKind, body: JSONObject) -> None:
    """The templates' BodyCheck: the body decodes as the kind's creation payload; else the field, dotted."""
    try:
        _command(kind, body)
    except msgspec.ValidationError as exc:
        loc, message = msgspec_loc(exc)
        raise ValidationFailed(".".join(str(part) for part in loc[1:]), message) from exc


async def create(
    ports: Ports, organization_id: str, kind: TemplateKind, body: JSONObject, max_bytes: int | None = None
) -> Agent | TeamWithAgentsResponse:
    """Create the agent or team: the answer of POST /api/v1/agents or /teams for this body, errors included
    (with `max_bytes`, the request body limit: 413 beyond it, as that body sent directly would be)."""
    if max_bytes is not None and len(msgspec.json.encode(body)) > max_bytes:
        raise TooLarge("the instantiated body", "max_body_bytes", max_bytes)
    command = _command(kind, body)
    if kind is TemplateKind.AGENT:
        return agent_out(await agents.create_agent(ports, organization_id, command))
    return team_out(await teams.create_team(ports, organization_id, command))
