"""Template use cases: create, read, change and delete an organization's templates; list them with the built-in
ones; instantiate any of them through the agents' or teams' own create."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from controlplane_domain import crud
from controlplane_domain.config import JSONObject
from controlplane_domain.crud import Area
from controlplane_domain.errors import Forbidden
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient
from controlplane_domain.templates.builtins import BUILTINS, BY_ID
from controlplane_domain.templates.entity import Template, TemplateKind, TemplateParameter, TemplateScope
from controlplane_domain.templates.placeholders import Budget, substitute
from controlplane_domain.templates.rules import (
    BodyCheck,
    Candidates,
    check_not_builtin_name,
    check_template,
    parameter_values,
)

T = TypeVar("T")
Create = Callable[[TemplateKind, JSONObject], Awaitable[T]]
"""Creates an agent or a team from its creation payload, exactly as its own create route does."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTemplate:
    name: str
    kind: TemplateKind
    body: JSONObject
    description: str | None = None
    parameters: tuple[TemplateParameter, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateTemplate:
    name: str | Unset = UNSET
    kind: TemplateKind | Unset = UNSET
    description: str | Unset | None = UNSET
    parameters: tuple[TemplateParameter, ...] | Unset = UNSET
    body: JSONObject | Unset = UNSET


@dataclass(frozen=True, slots=True, kw_only=True)
class Instantiate:
    parameters: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None


TEMPLATES = Area("template", lambda uow: uow.templates)


async def _require(uow: UnitOfWork, organization_id: str, template_id: str, *, lock: bool = False) -> Template:
    """A built-in template, or the organization's; NotFound otherwise."""
    builtin = BY_ID.get(template_id)
    if builtin is not None:
        return builtin
    return await crud.require(TEMPLATES, uow, organization_id, template_id, lock=lock)


def _writable(template: Template) -> None:
    if template.builtin:
        raise Forbidden(
            f"template '{template.name}' is built in and read-only: create an organization template from its body "
            "(POST /api/v1/templates) to change it",
            {"template_id": template.id, "builtin": True},
        )


@retry_transient
async def create_template(
    ports: Ports,
    organization_id: str,
    command: CreateTemplate,
    check: BodyCheck,
    candidates: Candidates | None = None,
    max_bytes: int | None = None,
) -> Template:
    template = crud.new(Template, ports, organization_id, command)
    check_template(template, check, candidates, max_bytes)
    check_not_builtin_name(template.name)
    return await crud.add(TEMPLATES, ports, template)


async def get_template(ports: Ports, organization_id: str, template_id: str) -> Template:
    if template_id in BY_ID:
        return BY_ID[template_id]
    async with ports.read() as uow:
        return await _require(uow, organization_id, template_id)


async def list_templates(
    ports: Ports, organization_id: str, page: PageRequest, scope: TemplateScope = TemplateScope.ALL
) -> Page[Template]:
    """A page of the built-in templates, of the organization's, or of both (`all`: the built-in ones first, as
    they were shipped before any organization's; newest first, the organization's newest first and the built-in
    ones last, in reverse), those the page's `name` and `q` keep."""
    builtins = [t for t in BUILTINS if page.keeps_name(t.name)] if scope is not TemplateScope.ORGANIZATION else []
    if page.newest_first:
        builtins.reverse()
    items: list[Template] = []
    total = 0
    if scope is not TemplateScope.BUILTIN:
        if page.newest_first:  # the organization's first
            window = page
        else:
            window = replace(page, limit=max(1, page.limit - len(builtins[page.offset :])),
                             offset=max(0, page.offset - len(builtins)))  # fmt: skip
        async with ports.read() as uow:
            mine, total = await uow.templates.list_page(organization_id, window)
        if page.newest_first:
            items = mine[: page.limit]
            start = max(0, page.offset - total)
            items += builtins[start : start + page.limit - len(items)]
        else:
            items = builtins[page.offset : page.offset + page.limit]
            items += mine[: page.limit - len(items)]
    else:
        items = builtins[page.offset : page.offset + page.limit]
    return Page(items=items, total=total + len(builtins), limit=page.limit, offset=page.offset)


@retry_transient
async def update_template(
    ports: Ports,
    organization_id: str,
    template_id: str,
    command: UpdateTemplate,
    check: BodyCheck,
    candidates: Candidates | None = None,
    max_bytes: int | None = None,
) -> Template:
    """Change the given fields; the whole template is checked again (a new parameter list must still declare
    every placeholder of the body)."""
    async with ports.uow() as uow:
        template = await _require(uow, organization_id, template_id, lock=True)
        _writable(template)
        updated = crud.patched(template, command, ports.clock.now())
        check_template(updated, check, candidates, max_bytes)
        if updated.name != template.name:
            check_not_builtin_name(updated.name)
        await uow.templates.update(updated)
        await uow.commit()
    return updated


@retry_transient
async def delete_template(ports: Ports, organization_id: str, template_id: str) -> None:
    async with ports.uow() as uow:
        _writable(await _require(uow, organization_id, template_id, lock=True))
        await uow.templates.delete(organization_id, template_id)
        await uow.commit()


async def instantiate_template(
    ports: Ports,
    organization_id: str,
    template_id: str,
    command: Instantiate,
    create: Create[T],
    max_bytes: int | None = None,
) -> T:
    """Create the agent or team a template describes: its placeholders replaced by the parameters' values
    (`placeholders.substitute`), its name by `command.name` when given, then `create`, the same use case as
    a direct create, with its rules, its 422s and its 409 on a taken name. With `max_bytes` (the request body
    limit), the substitution stops with TooLarge (413) as soon as the body passes it: `create` measures the
    result exactly, as a body sent directly."""
    template = await get_template(ports, organization_id, template_id)
    budget = None if max_bytes is None else Budget(max_bytes, "the instantiated body", "max_body_bytes")
    body = substitute(template.body, parameter_values(template.parameters, command.parameters), budget)
    if command.name is not None:
        body["name"] = command.name
    return await create(template.kind, body)
