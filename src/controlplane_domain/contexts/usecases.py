"""Context use cases: set, read and remove the context of a project, environment, team or agent; read the context
stored with an execution (what its lease carries)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from controlplane_domain.audit.usecases import record
from controlplane_domain.contexts.entity import NO_CONTEXT, Context, OwnedContext, OwnerType, ResolvedContext
from controlplane_domain.contexts.presence import CHANGED
from controlplane_domain.contexts.resolution import check_context
from controlplane_domain.errors import NotFound, found
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextView:
    """An owner's context as answered."""

    organization_id: str
    owner_type: OwnerType
    owner_id: str
    context: Context
    created_at: datetime | None = None
    updated_at: datetime | None = None


def _view(owned: OwnedContext) -> ContextView:
    return ContextView(
        organization_id=owned.organization_id,
        owner_type=owned.owner_type,
        owner_id=owned.owner_id,
        context=owned.context,
        created_at=owned.created_at,
        updated_at=owned.updated_at,
    )


async def require_owner(uow: UnitOfWork, organization_id: str, owner_type: OwnerType, owner_id: str) -> None:
    """The project, environment, team or agent exists in this organization, or NotFound."""
    owner: object | None
    if owner_type is OwnerType.PROJECT:
        owner = await uow.projects.get(organization_id, owner_id)
    elif owner_type is OwnerType.ENVIRONMENT:
        owner = await uow.environments.get(organization_id, owner_id)
    elif owner_type is OwnerType.TEAM:
        owner = await uow.teams.get(organization_id, owner_id)
    else:
        owner = await uow.agents.get(organization_id, owner_id)
    found(owner, owner_type.value, owner_id)


async def get_context(ports: Ports, organization_id: str, owner_type: OwnerType, owner_id: str) -> ContextView:
    """The owner's context; NotFound naming the owner when it does not exist, naming the context when the owner has
    none (never set, or deleted: a GET after a DELETE is 404, as for any resource)."""
    async with ports.read() as uow:
        await require_owner(uow, organization_id, owner_type, owner_id)
        owned = await uow.contexts.get(organization_id, owner_type, owner_id)
    return _view(found(owned, "context", owner_id))


@retry_transient
async def put_context(
    ports: Ports, organization_id: str, owner_type: OwnerType, owner_id: str, context: Context
) -> ContextView:
    """Set the owner's whole context (a replacement: what is not given is emptied)."""
    check_context(context)
    now = ports.clock.now()
    async with ports.uow() as uow:
        await require_owner(uow, organization_id, owner_type, owner_id)
        before = await uow.contexts.get(organization_id, owner_type, owner_id)
        owned = OwnedContext(
            organization_id=organization_id,
            owner_type=owner_type,
            owner_id=owner_id,
            context=context,
            created_at=now if before is None else before.created_at,
            updated_at=now,
        )
        await _record(uow, organization_id, owner_type, owner_id, "put")
        await uow.contexts.put(owned)
        await uow.commit()
    await _changed(ports)
    return _view(owned)


@retry_transient
async def delete_context(ports: Ports, organization_id: str, owner_type: OwnerType, owner_id: str) -> None:
    """Remove the owner's context (nothing to remove is not an error); executions already created keep theirs."""
    async with ports.uow() as uow:
        await require_owner(uow, organization_id, owner_type, owner_id)
        await _record(uow, organization_id, owner_type, owner_id, "delete")
        await uow.contexts.delete(organization_id, owner_type, owner_id)
        await uow.commit()
    await _changed(ports)


async def _record(uow: UnitOfWork, organization_id: str, owner_type: OwnerType, owner_id: str, verb: str) -> None:
    """The audit event of a context's change."""
    await record(
        uow,
        organization_id=organization_id,
        action=f"context.{verb}",
        resource_type="context",
        resource_id=owner_id,
        details={"owner_type": owner_type.value},
    )


async def _changed(ports: Ports) -> None:
    """Every node forgets which organizations it saw without contexts (presence.py)."""
    if ports.bus is not None:
        await ports.bus.publish(CHANGED)


async def stored_context(uow: UnitOfWork, organization_id: str, execution_id: str) -> ResolvedContext:
    """The context resolved when the execution was created, in an open unit of work (the lease reads it so);
    the empty context when it had none. Does not check that the execution exists."""
    return await uow.contexts.for_execution(organization_id, execution_id) or NO_CONTEXT


async def execution_context(ports: Ports, organization_id: str, execution_id: str) -> ResolvedContext:
    """`GET /api/v1/executions/{id}/context`: the execution's stored context, or NotFound."""
    async with ports.read() as uow:
        if await uow.executions.get(organization_id, execution_id) is None:
            raise NotFound("execution", execution_id)
        return await stored_context(uow, organization_id, execution_id)
