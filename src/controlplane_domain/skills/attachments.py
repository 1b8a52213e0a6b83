"""Skills attached to agents, teams and environments, and an agent's skills resolved across those layers.

An agent's and a team's `skill_ids` (a column their reads render) is the truth of which skills they have; the
store's attachments hold each one's `configuration_override` and are kept equal to `skill_ids` in the same unit
of work. An environment has no such column: its attachments are the truth."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from controlplane_domain.config import JSONObject
from controlplane_domain.errors import NotFound, ValidationFailed, found
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient
from controlplane_domain.skills.entity import LAYERS, AttachedSkill, ResolvedSkill, Skill, SkillOwner, merge_patch
from controlplane_domain.skills.usecases import (
    check_configuration,
    check_configuration_off_loop,
    is_heavy,
    require_skill,
    schema_validator,
)

OVERRIDE_FIELD = "configuration_override"


async def check_skill_ids(uow: UnitOfWork, organization_id: str, skill_ids: Sequence[str], field: str) -> list[str]:
    """`skill_ids` without repeats, once each names a skill of the organization (ValidationFailed otherwise)."""
    wanted = list(dict.fromkeys(skill_ids))
    if not wanted:
        return wanted
    found = {skill.id for skill in await uow.skills.get_many(organization_id, wanted)}
    missing = [skill_id for skill_id in wanted if skill_id not in found]
    if missing:
        raise ValidationFailed(field, f"unknown skill id(s): {', '.join(missing)}")
    return wanted


async def sync_attachments(
    uow: UnitOfWork, organization_id: str, owner: SkillOwner, owner_id: str, skill_ids: Sequence[str], now: datetime
) -> None:
    """Make the owner's attachments exactly `skill_ids` (checked), keeping the overrides of those that stay."""
    current = await uow.skills.attachments(organization_id, owner, owner_id)
    leaving = [skill_id for skill_id in current if skill_id not in set(skill_ids)]
    if leaving:
        await uow.skills.detach(organization_id, owner, owner_id, leaving)
    for skill_id in skill_ids:
        if skill_id not in current:
            await uow.skills.attach(organization_id, owner, owner_id, skill_id, None, now)


async def _owner_skill_ids(uow: UnitOfWork, organization_id: str, owner: SkillOwner, owner_id: str) -> list[str]:
    """The skills the owner has, in its order (NotFound when there is no such owner); an environment's are its
    attachments."""
    if owner is SkillOwner.AGENT:
        agent = found(await uow.agents.get(organization_id, owner_id), "agent", owner_id)
        return list(agent.skill_ids)
    if owner is SkillOwner.TEAM:
        team = found(await uow.teams.get(organization_id, owner_id), "team", owner_id)
        return list(team.skill_ids or [])
    if await uow.environments.get(organization_id, owner_id) is None:
        raise NotFound("environment", owner_id)
    return list(await uow.skills.attachments(organization_id, owner, owner_id))


def _changed(ids: Sequence[str] | None, adding: str | None, removing: str | None) -> list[str] | None:
    """`ids` with `adding` appended (once) and `removing` taken out; None when that changes nothing."""
    before = list(ids or [])
    after = [skill_id for skill_id in before if skill_id != removing]
    if adding is not None and adding not in after:
        after.append(adding)
    return None if after == before else after


async def _set_owner_skill_ids(
    uow: UnitOfWork, organization_id: str, owner: SkillOwner, owner_id: str, adding: str | None, removing: str | None,
    now: datetime,
) -> None:  # fmt: skip
    """Add or remove one id in the agent's or team's `skill_ids` (its row locked first); NotFound when there is no
    such owner. Environments have no such list."""
    if owner is SkillOwner.AGENT:
        agent = found(await uow.agents.get(organization_id, owner_id, for_update=True), "agent", owner_id)
        changed = _changed(agent.skill_ids, adding, removing)
        if changed is not None:
            await uow.agents.update(replace(agent, skill_ids=changed, updated_at=now))
    elif owner is SkillOwner.TEAM:
        team = found(await uow.teams.get(organization_id, owner_id, for_update=True), "team", owner_id)
        changed = _changed(team.skill_ids, adding, removing)
        if changed is not None:
            await uow.teams.update(replace(team, skill_ids=changed, updated_at=now))
    elif await uow.environments.get(organization_id, owner_id, for_update=True) is None:
        raise NotFound("environment", owner_id)


@retry_transient
async def attach_skill(
    ports: Ports,
    organization_id: str,
    owner: SkillOwner,
    owner_id: str,
    skill_id: str,
    override: JSONObject | None = None,
) -> AttachedSkill:
    """Attach the skill with this override (none: the skill's own configuration), replacing an attachment already
    there. The skill's configuration merged with the override (RFC 7386) must follow the type's schema: checked
    before the unit of work (off the event loop when heavy), merged with the skill as read then, and again in
    place only if the skill changed meanwhile. Without an override, a heavy configuration of the skill's own is
    not checked again (it was when it was stored)."""
    validator = schema_validator(ports)
    checked: Skill | None = None  # the skill whose merge with `override` was checked before the unit of work
    if override is not None:
        async with ports.read() as uow:
            checked = await require_skill(uow, organization_id, skill_id)
        await check_configuration_off_loop(
            validator, checked.type, merge_patch(checked.configuration, override), OVERRIDE_FIELD
        )
    async with ports.uow() as uow:
        skill = await require_skill(uow, organization_id, skill_id, lock=True)
        now = ports.clock.now()
        await _set_owner_skill_ids(uow, organization_id, owner, owner_id, skill_id, None, now)
        merged = skill.configuration if override is None else merge_patch(skill.configuration, override)
        if override is None and is_heavy(merged):
            pass  # the skill's own configuration, checked when stored
        elif checked is None or (checked.type, checked.configuration) != (skill.type, skill.configuration):
            check_configuration(validator, skill.type, merged, OVERRIDE_FIELD)
        await uow.skills.attach(organization_id, owner, owner_id, skill_id, override, now)
        await uow.commit()
    return AttachedSkill(skill, override, merged)


@retry_transient
async def detach_skill(ports: Ports, organization_id: str, owner: SkillOwner, owner_id: str, skill_id: str) -> None:
    """Detach the skill; detaching one that is not attached changes nothing."""
    async with ports.uow() as uow:
        await require_skill(uow, organization_id, skill_id, lock=True)
        now = ports.clock.now()
        await _set_owner_skill_ids(uow, organization_id, owner, owner_id, None, skill_id, now)
        await uow.skills.detach(organization_id, owner, owner_id, [skill_id])
        await uow.commit()


async def _attached(uow: UnitOfWork, organization_id: str, owner: SkillOwner, owner_id: str) -> list[AttachedSkill]:
    ids = await _owner_skill_ids(uow, organization_id, owner, owner_id)
    overrides = await uow.skills.attachments(organization_id, owner, owner_id)
    skills = {skill.id: skill for skill in await uow.skills.get_many(organization_id, ids)}
    attached = []
    for skill_id in ids:
        skill = skills.get(skill_id)
        if skill is not None:  # (an id stored before skills existed names nothing: left out)
            attached.append(_attachment(skill, overrides.get(skill_id)))
    return attached


async def attached_to_many(
    uow: UnitOfWork, organization_id: str, owner: SkillOwner, skill_ids: Mapping[str, Sequence[str]]
) -> dict[str, list[AttachedSkill]]:
    """What `list_attached_skills` lists, for several agents or teams at once (owner id -> its skill ids, in its
    order): one read whatever their number, none when none has a skill."""
    owners = [owner_id for owner_id, ids in skill_ids.items() if ids]
    attached = await uow.skills.attached_of(organization_id, owner, owners) if owners else {}
    found: dict[str, list[AttachedSkill]] = {}
    for owner_id, ids in skill_ids.items():
        mine = attached.get(owner_id, {})
        found[owner_id] = [_attachment(*mine[skill_id]) for skill_id in ids if skill_id in mine]
    return found


def _attachment(skill: Skill, override: JSONObject | None) -> AttachedSkill:
    merged = skill.configuration if override is None else merge_patch(skill.configuration, override)
    return AttachedSkill(skill, override, merged)


async def list_attached_skills(
    ports: Ports, organization_id: str, owner: SkillOwner, owner_id: str, page: PageRequest
) -> Page[AttachedSkill]:
    """A page of the skills attached directly to the agent, team or environment, in the order they were attached
    (the page's `order`: newest first reverses it)."""
    async with ports.read() as uow:
        attached = await _attached(uow, organization_id, owner, owner_id)
    if page.newest_first:
        attached.reverse()
    window = attached[page.offset : page.offset + page.limit]
    return Page(items=window, total=len(attached), limit=page.limit, offset=page.offset)


async def resolved_skills(
    uow: UnitOfWork, organization_id: str, agent_id: str | None, team_id: str | None, environment_id: str | None
) -> list[ResolvedSkill]:
    """The skills an agent runs with: the environment's, then the team's, then the agent's own; a later layer's
    override merges over the earlier ones' configuration (RFC 7386). Disabled skills are left out; a layer whose
    owner is missing (None, or gone) adds nothing. In order of first appearance, layer by layer."""
    owners = {SkillOwner.ENVIRONMENT: environment_id, SkillOwner.TEAM: team_id, SkillOwner.AGENT: agent_id}
    found: dict[str, tuple[Skill, JSONObject, list[SkillOwner]]] = {}
    for layer in LAYERS:
        owner_id = owners[layer]
        if owner_id is None:
            continue
        try:
            attached = await _attached(uow, organization_id, layer, owner_id)
        except NotFound:
            continue
        for item in attached:
            skill, configuration, layers = found.get(item.skill.id, (item.skill, item.skill.configuration, []))
            if item.configuration_override is not None:
                configuration = merge_patch(configuration, item.configuration_override)
            found[item.skill.id] = (skill, configuration, [*layers, layer])
    return [
        ResolvedSkill(
            skill_id=skill.id,
            name=skill.name,
            type=skill.type,
            description=skill.description,
            configuration=configuration,
            source=layers[-1],
            layers=tuple(layers),
        )
        for skill, configuration, layers in found.values()
        if skill.enabled
    ]


async def resolve_agent_skills(
    ports: Ports, organization_id: str, agent_id: str, environment_id: str | None = None
) -> list[ResolvedSkill]:
    """The agent's resolved skills with its team's and, when given, an environment's."""
    async with ports.read() as uow:
        agent = found(await uow.agents.get(organization_id, agent_id), "agent", agent_id)
        if environment_id is not None and await uow.environments.get(organization_id, environment_id) is None:
            raise ValidationFailed("environment_id", f"environment '{environment_id}' does not exist", "query")
        return await resolved_skills(uow, organization_id, agent.id, agent.team_id, environment_id)
