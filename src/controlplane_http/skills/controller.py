"""Skills: the type catalog, create, list, get, patch, delete; attaching them to agents, teams and environments;
an agent's resolved skills."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from litestar import Controller, delete, get, post
from litestar.openapi.spec import Operation, RequestBody
from litestar.params import FromPath, Parameter
from litestar.types import Scope

from controlplane_domain.paging import Order, Page
from controlplane_domain.skills import attachments, usecases
from controlplane_domain.skills.catalog import SKILL_TYPES
from controlplane_domain.skills.entity import AttachedSkill as DomainAttachedSkill
from controlplane_domain.skills.entity import Skill as DomainSkill
from controlplane_domain.skills.entity import SkillOwner
from controlplane_http.area import HttpArea
from controlplane_http.crud import (
    Create,
    Listing,
    Read,
    Remove,
    Resource,
    Update,
    as_command,
    given_as,
    page_parameters,
    routes,
)
from controlplane_http.handlers import Limit, Offset, caller, errors, page_of, page_request
from controlplane_http.signatures import SCOPE, install, json_body, path_id
from controlplane_wire.base import to_wire
from controlplane_wire.skills import (
    AttachedSkill,
    AttachedSkillList,
    ResolvedSkill,
    ResolvedSkillList,
    Skill,
    SkillAttach,
    SkillCreate,
    SkillList,
    SkillType,
    SkillTypeList,
    SkillUpdate,
)

C = TypeVar("C", bound=type)
EnvironmentLayer = Annotated[
    str | None, Parameter(description="the environment whose skills form the first layer (none: no such layer)")
]


@dataclass
class OptionalBody(Operation):
    """An operation whose JSON body may be left out (Litestar documents every body as required)."""

    def __post_init__(self) -> None:
        if isinstance(self.request_body, RequestBody):
            self.request_body.required = False


def skill_out(skill: DomainSkill) -> Skill:
    return to_wire(skill, Skill)


def attached_out(item: DomainAttachedSkill) -> AttachedSkill:
    return to_wire(item, AttachedSkill)


@routes(
    Resource("skill", "Skill", Skill, SkillList),
    Create(usecases.create_skill, body=SkillCreate, command=as_command(usecases.CreateSkill)),
    Listing(usecases.list_skills, named=True),
    Read(usecases.get_skill),
    Update(usecases.update_skill, body=SkillUpdate, command=given_as(usecases.UpdateSkill)),
    Remove(usecases.delete_skill),
)
class SkillController(Controller):
    path = "/api/v1/skills"
    tags = ["skills"]

    @get("/types", operation_id="listSkillTypes", responses=errors())
    async def list_types(self, scope: Scope, limit: Limit = 50, offset: Offset = 0) -> SkillTypeList:
        caller(scope)
        items = [to_wire(kind, SkillType) for kind in SKILL_TYPES[offset : offset + limit]]
        return SkillTypeList(items=items, total=len(SKILL_TYPES), limit=limit, offset=offset)


def _attachment_routes(controller: C) -> C:
    """For each owner (agents, teams, environments): `POST` and `DELETE /{owners}/{id}/skills/{skill_id}`,
    `GET /{owners}/{id}/skills`; handlers `attach_to_<owner>`, `detach_from_<owner>`, `<owner>_skills`."""
    for owner in (SkillOwner.AGENT, SkillOwner.TEAM, SkillOwner.ENVIRONMENT):
        _add_owner_routes(controller, owner)
    return controller


def _add_owner_routes(controller: type, owner: SkillOwner) -> None:
    noun = owner.value
    key, title = f"{noun}_id", noun.title()
    skills = f"/{noun}s/{{{key}:str}}/skills"

    async def attach(self: Any, scope: Scope, skill_id: str, data: SkillAttach | None = None, **ids: str) -> Any:
        ports, principal = caller(scope)
        override = None if data is None else data.configuration_override
        organization_id = principal.organization_id
        return attached_out(await attachments.attach_skill(ports, organization_id, owner, ids[key], skill_id, override))

    async def detach(self: Any, scope: Scope, skill_id: str, **ids: str) -> None:
        ports, principal = caller(scope)
        await attachments.detach_skill(ports, principal.organization_id, owner, ids[key], skill_id)

    async def attached(self: Any, scope: Scope, limit: int, offset: int, order: Order | None, **ids: str) -> Any:
        ports, principal = caller(scope)
        request = page_request(limit, offset, order)
        page = await attachments.list_attached_skills(ports, principal.organization_id, owner, ids[key], request)
        return page_of(AttachedSkillList, page, attached_out)

    ids = [path_id(key), path_id("skill_id"), SCOPE]
    attaching = post(
        f"{skills}/{{skill_id:str}}",
        operation_id=f"attachSkillTo{title}",
        status_code=200,
        responses=errors(404, 415),
        operation_class=OptionalBody,
    )
    install(
        controller, f"attach_to_{noun}", attaching, attach, [*ids, json_body(SkillAttach | None, None)], AttachedSkill
    )
    detaching = delete(
        f"{skills}/{{skill_id:str}}", operation_id=f"detachSkillFrom{title}", status_code=204, responses=errors(404)
    )
    install(controller, f"detach_from_{noun}", detaching, detach, ids, None)
    listing = get(skills, operation_id=f"list{title}Skills", responses=errors(404))
    install(
        controller, f"{noun}_skills", listing, attached, [path_id(key), SCOPE, *page_parameters()], AttachedSkillList
    )


@_attachment_routes
class SkillAttachmentController(Controller):
    """`/{agents|teams|environments}/{id}/skills[/{skill_id}]`: a skill attached with an optional override
    (POST states the attachment: its body's override, none when absent), detached (DELETE; idempotent), listed."""

    path = "/api/v1"
    tags = ["skills"]

    @get("/agents/{agent_id:str}/skills/resolved", operation_id="listResolvedAgentSkills", responses=errors(404))
    async def resolved(
        self,
        agent_id: FromPath[str],
        scope: Scope,
        environment_id: EnvironmentLayer = None,
        limit: Limit = 50,
        offset: Offset = 0,
    ) -> ResolvedSkillList:
        ports, principal = caller(scope)
        found = await attachments.resolve_agent_skills(ports, principal.organization_id, agent_id, environment_id)
        page = Page(items=found[offset : offset + limit], total=len(found), limit=limit, offset=offset)
        return page_of(ResolvedSkillList, page, lambda item: to_wire(item, ResolvedSkill))


AREA = HttpArea((SkillController, SkillAttachmentController), visible={"skill_id": usecases.get_skill})
