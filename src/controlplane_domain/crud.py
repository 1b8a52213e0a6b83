"""CRUD written once: require, get, list, update and delete an organization's object over the repository protocol.

An area describes itself once (`Area`: its noun, its repository in the unit of work, what references name it) and
its use cases call these; what is left in the area is its rules:

    PROJECTS = Area("project", lambda uow: uow.projects, Kind.PROJECT, cascades=True)

    async def get_skill(ports: Ports, organization_id: str, skill_id: str) -> Skill:
        return await crud.get(SKILLS, ports, organization_id, skill_id)
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from controlplane_domain.errors import found
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET
from controlplane_domain.references import Dangling, Kind, Target, check_unreferenced
from controlplane_domain.repository import Repository

if TYPE_CHECKING:
    from controlplane_domain.ports import Ports, UnitOfWork

T = TypeVar("T")


def _unnamed(obj: object) -> str | None:
    return None


def _any_id(object_id: str) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Area(Generic[T]):
    """An area's objects: `noun` (a NotFound's), `repository` (its port in a unit of work), `kind` (what references
    name: its delete checks them, references.py), `name` (how referrers name an object besides its id: a secret's
    name), `cascades` (a forced delete takes the references with it, so it leaves nothing dangling), `valid_id`
    (an id that cannot be one of its objects is NotFound without a read)."""

    noun: str
    repository: Callable[[UnitOfWork], Repository[T]]
    kind: Kind | None = None
    name: Callable[[T], str | None] = _unnamed
    cascades: bool = False
    valid_id: Callable[[str], bool] = _any_id


async def require(area: Area[T], uow: UnitOfWork, organization_id: str, object_id: str, *, lock: bool = False) -> T:
    """The object of this organization, or NotFound; `lock`: locked until the unit of work ends."""
    obj = None
    if area.valid_id(object_id):
        obj = await area.repository(uow).get(organization_id, object_id, for_update=lock)
    return found(obj, area.noun, object_id)


async def add(area: Area[T], ports: Ports, obj: T, check: Callable[[UnitOfWork, T], Awaitable[T]] | None = None) -> T:
    """Add the new object (a Conflict on a taken unique field), and give it back; `check` first passes it in the
    unit of work (it reads what the object names, raises on a broken rule, gives back the object to write)."""
    async with ports.uow() as uow:
        if check is not None:
            obj = await check(uow, obj)
        await area.repository(uow).add(obj)
        await uow.commit()
    return obj


async def get(area: Area[T], ports: Ports, organization_id: str, object_id: str) -> T:
    async with ports.read() as uow:
        return await require(area, uow, organization_id, object_id)


async def list_page(area: Area[T], ports: Ports, organization_id: str, page: PageRequest) -> Page[T]:
    async with ports.read() as uow:
        items, total = await area.repository(uow).list_page(organization_id, page)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


async def update(
    area: Area[T], ports: Ports, organization_id: str, object_id: str, change: Callable[[T, datetime], T]
) -> T:
    """The object as `change` makes it (from the locked object and now; it raises on a broken rule), written."""

    async def change_in(uow: UnitOfWork, obj: T, now: datetime) -> T:
        return change(obj, now)

    return await update_in(area, ports, organization_id, object_id, change_in)


async def update_in(
    area: Area[T],
    ports: Ports,
    organization_id: str,
    object_id: str,
    change: Callable[[UnitOfWork, T, datetime], Awaitable[T]],
) -> T:
    """`update` with a `change` that also reads (and writes) in the unit of work, before the object is written."""
    async with ports.uow() as uow:
        obj = await require(area, uow, organization_id, object_id, lock=True)
        updated = await change(uow, obj, ports.clock.now())
        await area.repository(uow).update(updated)
        await uow.commit()
    return updated


async def delete(area: Area[T], ports: Ports, organization_id: str, object_id: str, *, force: bool = False) -> Dangling:
    """Delete the object. Named by others (its `kind`): 409 IN_USE, or with `force` what it left dangling."""
    async with ports.uow() as uow:
        obj = await require(area, uow, organization_id, object_id, lock=True)
        dangling = Dangling()
        if area.kind is not None:
            target = Target(area.kind, object_id, area.name(obj))
            dangling = await check_unreferenced(uow, organization_id, target, force=force)
        await area.repository(uow).delete(organization_id, object_id)
        await uow.commit()
    return Dangling() if area.cascades else dangling


@functools.cache
def _containers(kind: Any) -> dict[str, Any]:
    """The fields of the dataclass `kind` that hold a dict, a list or a tuple, with that container type."""
    hints = typing.get_type_hints(kind)
    shapes = {name: typing.get_origin(hint) or hint for name, hint in hints.items()}
    return {name: shape for name, shape in shapes.items() if shape in (dict, list, tuple)}


def _given(kind: Any, command: Any, *, copy: bool, omit: Collection[str] = ()) -> dict[str, Any]:
    """The command's given fields (not UNSET, nor in `omit`), a dict, list or tuple as the field of `kind` holds
    it: copied when `copy`, else converted only when it is another container (a list for a tuple: an update keeps
    the very value)."""
    containers = _containers(kind)
    given = {
        field.name: getattr(command, field.name) for field in dataclasses.fields(command) if field.name not in omit
    }
    return {
        name: containers[name](value)
        if name in containers and (copy or not isinstance(value, containers[name]))
        else value
        for name, value in given.items()
        if value is not UNSET
    }


def new(
    kind: Callable[..., T], ports: Ports, organization_id: str, command: Any, omit: Collection[str] = (), **values: Any
) -> T:
    """A new object of the organization from a create command (a dataclass of some of the object's fields, and
    those in `omit` that are not): a new id (from `ports.ids` unless `values` give one), now as `created_at` and
    `updated_at`, `values` for the fields set otherwise."""
    now = ports.clock.now()
    given = _given(kind, command, copy=True, omit=omit)
    object_id = values.pop("id") if "id" in values else ports.ids.new_id()
    return kind(id=object_id, organization_id=organization_id, created_at=now, updated_at=now, **(given | values))


def patched(obj: T, command: Any, now: datetime, omit: Collection[str] = (), **values: Any) -> T:
    """`obj` with an update command's given fields (those not UNSET, nor in `omit`: fields the object has not),
    then `values`, and `updated_at` now."""
    given = {
        field.name: value
        for field in dataclasses.fields(command)
        if field.name not in omit and (value := getattr(command, field.name)) is not UNSET
    }
    return cast(T, dataclasses.replace(cast(Any, obj), **(given | values), updated_at=now))


async def patch(
    area: Area[T], ports: Ports, organization_id: str, object_id: str, command: Any, check: Callable[[T], None]
) -> T:
    """`update` with the command's given fields (`patched`), the result checked by `check` (it raises)."""

    def change(obj: T, now: datetime) -> T:
        updated = patched(obj, command, now)
        check(updated)
        return updated

    return await update(area, ports, organization_id, object_id, change)


async def patch_in(
    area: Area[T],
    ports: Ports,
    organization_id: str,
    object_id: str,
    command: Any,
    check: Callable[[UnitOfWork, T, T], Awaitable[T]],
    omit: Collection[str] = (),
) -> T:
    """`update_in` with the command's given fields (`patched`, but those in `omit`), then `check(uow, updated,
    stored)`: it raises on a broken rule, and gives back the object to write."""

    async def change(uow: UnitOfWork, obj: T, now: datetime) -> T:
        return await check(uow, patched(obj, command, now, omit), obj)

    return await update_in(area, ports, organization_id, object_id, change)
