"""Skill use cases: the type catalog, and create, read, change, delete a skill."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any

from controlplane_domain import crud
from controlplane_domain.config import JSONObject
from controlplane_domain.crud import Area
from controlplane_domain.errors import ValidationFailed, dotted_path
from controlplane_domain.names import check_name
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset, pick
from controlplane_domain.ports import Ports, UnitOfWork, wired
from controlplane_domain.references import Dangling, Kind, Target, check_unreferenced
from controlplane_domain.retry import retry_transient
from controlplane_domain.skills.catalog import SKILL_TYPES_BY_NAME
from controlplane_domain.skills.entity import Skill, SkillOwner
from controlplane_domain.skills.ports import SchemaProblem, SchemaValidator

HEAVY_VALUES = 1000
"""A configuration holding more values (objects, arrays and scalars, at any depth; a string counts one for each
HEAVY_STRING_CHARACTERS characters) is checked against its schema in a worker thread, before its unit of work:
checking is linear in the values and would hold the event loop's thread (a 1 MiB configuration for seconds, a
pattern on a long string for far more than a request should). Smaller ones are checked in place, as before
(docs/api-decisions.md, "Bounds")."""
HEAVY_STRING_CHARACTERS = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateSkill:
    name: str
    type: str
    description: str | None = None
    enabled: bool = True
    configuration: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateSkill:
    name: str | Unset = UNSET
    type: str | Unset = UNSET
    description: str | Unset | None = UNSET
    enabled: bool | Unset = UNSET
    configuration: JSONObject | Unset = UNSET


def schema_validator(ports: Ports) -> SchemaValidator:
    """The validator wired in `Ports.schemas`."""
    return wired(ports.schemas, "no SchemaValidator is wired in Ports.schemas (controlplane_adapters.schemas)")


def is_heavy(value: Any, most: int = HEAVY_VALUES) -> bool:
    """Whether `value` holds more than `most` values, keys and strings weighed by their length (counted until there
    are more: at most `most` steps)."""
    pending = [value]
    seen = 0
    while pending:
        item = pending.pop()
        seen += 1
        if isinstance(item, (dict, list)) and len(item) > most:  # (before a step over each of its items)
            return True
        if isinstance(item, dict):
            pending.extend(item.values())
            seen += sum(len(key) for key in item) // HEAVY_STRING_CHARACTERS
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str):
            seen += len(item) // HEAVY_STRING_CHARACTERS
        if seen > most:
            return True
    return False


def _kind_schema(skill_type: str) -> dict[str, Any]:
    kind = SKILL_TYPES_BY_NAME.get(skill_type)
    if kind is None:
        raise ValidationFailed("type", f"unknown skill type '{skill_type}'; one of: {', '.join(SKILL_TYPES_BY_NAME)}")
    return kind.configuration_schema


def _raise_first(problems: list[SchemaProblem], field: str) -> None:
    if problems:
        first = problems[0]
        raise ValidationFailed((*dotted_path(field), *first.path), first.message)


def check_configuration(validator: SchemaValidator, skill_type: str, configuration: Any, field: str) -> None:
    """The configuration follows the type's schema; else ValidationFailed naming `field.<path>` of the first
    problem (a missing or unexpected property is named too)."""
    _raise_first(validator.problems(_kind_schema(skill_type), configuration), field)


async def check_configuration_off_loop(
    validator: SchemaValidator, skill_type: str, configuration: Any, field: str
) -> None:
    """`check_configuration`, in a worker thread when the configuration `is_heavy` (the event loop serves other
    requests meanwhile). Never inside a unit of work: a unit of work must not wait on a thread (a store may serve
    it in the event loop's own thread)."""
    schema = _kind_schema(skill_type)
    if is_heavy(configuration):
        _raise_first(await asyncio.to_thread(validator.problems, schema, configuration), field)
    else:
        _raise_first(validator.problems(schema, configuration), field)


def _check_skill(validator: SchemaValidator, skill: Skill) -> None:
    check_name("name", skill.name)
    check_configuration(validator, skill.type, skill.configuration, "configuration")


SKILLS = Area("skill", lambda uow: uow.skills)


async def require_skill(uow: UnitOfWork, organization_id: str, skill_id: str, *, lock: bool = False) -> Skill:
    """The skill of this organization, or NotFound."""
    return await crud.require(SKILLS, uow, organization_id, skill_id, lock=lock)


@retry_transient
async def create_skill(ports: Ports, organization_id: str, command: CreateSkill) -> Skill:
    skill = crud.new(Skill, ports, organization_id, command)
    check_name("name", skill.name)
    await check_configuration_off_loop(schema_validator(ports), skill.type, skill.configuration, "configuration")
    return await crud.add(SKILLS, ports, skill)


async def get_skill(ports: Ports, organization_id: str, skill_id: str) -> Skill:
    return await crud.get(SKILLS, ports, organization_id, skill_id)


async def list_skills(ports: Ports, organization_id: str, page: PageRequest) -> Page[Skill]:
    return await crud.list_page(SKILLS, ports, organization_id, page)


@retry_transient
async def update_skill(ports: Ports, organization_id: str, skill_id: str, command: UpdateSkill) -> Skill:
    """Change the given fields; a new type or configuration is checked against the (new) type's schema (a heavy
    configuration before the unit of work, off the event loop, against the type the skill has then: checked
    again in place only if the type changed meanwhile)."""
    validator = schema_validator(ports)
    checked: tuple[str, Any] | None = None  # (type, configuration) checked off the loop
    if not isinstance(command.configuration, Unset) and is_heavy(command.configuration):
        async with ports.read() as uow:
            kind = pick(command.type, (await require_skill(uow, organization_id, skill_id)).type)
        await check_configuration_off_loop(validator, kind, command.configuration, "configuration")
        checked = (kind, command.configuration)

    def check(updated: Skill) -> None:
        if checked is not None and checked[0] == updated.type and checked[1] is updated.configuration:
            check_name("name", updated.name)
        else:
            _check_skill(validator, updated)

    return await crud.patch(SKILLS, ports, organization_id, skill_id, command, check)


@retry_transient
async def delete_skill(ports: Ports, organization_id: str, skill_id: str, *, force: bool = False) -> Dangling:
    """Delete the skill. Attached anywhere: 409 IN_USE; with `force` it leaves every agent's and team's
    `skill_ids`, and every attachment goes with it, so nothing is left dangling (references.py)."""
    async with ports.uow() as uow:
        await require_skill(uow, organization_id, skill_id, lock=True)
        await check_unreferenced(uow, organization_id, Target(Kind.SKILL, skill_id), force=force)
        now = ports.clock.now()
        for agent_id in await uow.skills.owners(organization_id, SkillOwner.AGENT, skill_id):
            agent = await uow.agents.get(organization_id, agent_id, for_update=True)
            if agent is not None and skill_id in agent.skill_ids:
                kept = [kept for kept in agent.skill_ids if kept != skill_id]
                await uow.agents.update(replace(agent, skill_ids=kept, updated_at=now))
        for team_id in await uow.skills.owners(organization_id, SkillOwner.TEAM, skill_id):
            team = await uow.teams.get(organization_id, team_id, for_update=True)
            if team is not None and team.skill_ids is not None and skill_id in team.skill_ids:
                kept = [kept for kept in team.skill_ids if kept != skill_id]
                await uow.teams.update(replace(team, skill_ids=kept, updated_at=now))
        await uow.skills.delete(organization_id, skill_id)
        await uow.commit()
    return Dangling()
