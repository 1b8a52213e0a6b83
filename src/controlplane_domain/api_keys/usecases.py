"""API key use cases: create (the key is returned once), list, get, revoke, authenticate."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from controlplane_domain.api_keys.entity import MAX_BINDINGS, ApiKey, format_key, parse_key
from controlplane_domain.audit.usecases import record
from controlplane_domain.errors import Forbidden, NotFound, Unauthenticated, ValidationFailed, found
from controlplane_domain.names import check_name, is_uuid
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.ports import Ports, SecretHasher, UnitOfWork
from controlplane_domain.principal import Principal, Role
from controlplane_domain.retry import retry_transient


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateApiKey:
    name: str
    role: Role = Role.MEMBER
    expires_at: datetime | None = None
    environment_ids: tuple[str, ...] = ()  # a worker key's bindings (see ApiKey)
    queue_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class IssuedApiKey:
    """The stored key and the only copy of its plaintext."""

    key: ApiKey
    plaintext: str


@retry_transient
async def create_api_key(
    ports: Ports, hasher: SecretHasher, principal: Principal, command: CreateApiKey
) -> IssuedApiKey:
    """Issue a key of at most the caller's own role; worker keys are issued by admins, bound or not."""
    check_name("name", command.name)
    if not principal.can(Role.ADMIN if command.role is Role.WORKER else command.role):
        raise Forbidden(f"a {principal.role} may not issue {command.role} keys")
    environment_ids = _bindings("environment_ids", command.environment_ids, command.role)
    queue_ids = _bindings("queue_ids", command.queue_ids, command.role)
    now = ports.clock.now()
    if command.expires_at is not None and command.expires_at.utcoffset() is None:
        raise ValidationFailed("expires_at", "must carry a UTC offset (e.g. 2030-01-01T00:00:00Z)")
    if command.expires_at is not None and command.expires_at <= now:
        raise ValidationFailed("expires_at", "must be in the future")
    key_id, secret = hasher.new_key_id(), hasher.new_secret()
    key = ApiKey(
        id=key_id,
        organization_id=principal.organization_id,
        name=command.name,
        role=command.role,
        secret_hash=hasher.hash(secret),
        created_by=principal.subject,
        created_at=now,
        expires_at=command.expires_at,
        environment_ids=environment_ids,
        queue_ids=queue_ids,
    )
    async with ports.uow() as uow:
        await _check_bindings(uow, key)
        await uow.api_keys.add(key)
        details = {"name": key.name, "role": key.role.value}
        if key.environment_ids:
            details["environment_ids"] = ",".join(key.environment_ids)
        if key.queue_ids:
            details["queue_ids"] = ",".join(key.queue_ids)
        await _record(uow, key, "create", details)
        await uow.commit()
    return IssuedApiKey(key, format_key(key_id, secret))


def _bindings(field: str, ids: tuple[str, ...], role: Role) -> tuple[str, ...]:
    """A worker key's bindings of one kind: ids in lowercase (they are UUIDs), each once, in the order given."""
    if ids and role is not Role.WORKER:
        raise ValidationFailed(field, "only a worker key is bound to environments or queues")
    if len(ids) > MAX_BINDINGS:
        raise ValidationFailed(field, f"at most {MAX_BINDINGS} ids")
    return tuple(dict.fromkeys(value.lower() for value in ids))


async def _check_bindings(uow: UnitOfWork, key: ApiKey) -> None:
    """Each environment and queue a key is bound to is one of its organization's."""
    for index, environment_id in enumerate(key.environment_ids):
        if not is_uuid(environment_id) or await uow.environments.get(key.organization_id, environment_id) is None:
            raise ValidationFailed(("environment_ids", index), "no environment of this organization has this id")
    for index, queue_id in enumerate(key.queue_ids):
        if not is_uuid(queue_id) or await uow.queues.get(key.organization_id, queue_id) is None:
            raise ValidationFailed(("queue_ids", index), "no worker queue of this organization has this id")


async def _record(uow: UnitOfWork, key: ApiKey, verb: str, details: dict[str, str] | None = None) -> None:
    """An API key's audit event (never its secret or hash: keys are audited here, not by their repository)."""
    await record(
        uow,
        organization_id=key.organization_id,
        action=f"api_key.{verb}",
        resource_type="api_key",
        resource_id=key.id,
        details=details,
    )


async def get_api_key(ports: Ports, organization_id: str, key_id: str) -> ApiKey:
    async with ports.read() as uow:
        key = await uow.api_keys.get(organization_id, key_id)
    return found(key, "api key", key_id)


async def list_api_keys(ports: Ports, organization_id: str, page: PageRequest) -> Page[ApiKey]:
    async with ports.read() as uow:
        items, total = await uow.api_keys.list_page(organization_id, page)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


@retry_transient
async def revoke_api_key(ports: Ports, organization_id: str, key_id: str) -> ApiKey:
    """Revoke a key; it stops working on the next request. Revoking twice changes nothing."""
    async with ports.uow() as uow:
        key = await uow.api_keys.get(organization_id, key_id, for_update=True)
        if key is None:
            raise NotFound("api key", key_id)
        if key.revoked_at is None:
            key = replace(key, revoked_at=ports.clock.now())
            await uow.api_keys.update(key)
            await _record(uow, key, "revoke")
            await uow.commit()
    if ports.bus is not None:
        await ports.bus.publish(REVOCATIONS)  # nodes drop their cached credentials
    return key


REVOCATIONS = "credentials:revoked"


async def verify_api_key(ports: Ports, hasher: SecretHasher, token: str) -> tuple[Principal, datetime | None]:
    """The principal of a presented key and when the key expires; Unauthenticated for anything malformed,
    unknown, revoked or expired."""
    parsed = parse_key(token)
    if parsed is None:
        raise Unauthenticated()
    key_id, secret = parsed
    async with ports.read() as uow:
        key = await uow.api_keys.find_for_authentication(key_id)
    if key is None or not hasher.verify(secret, key.secret_hash) or not key.is_usable(ports.clock.now()):
        raise Unauthenticated()
    principal = Principal(
        key.organization_id,
        f"api-key:{key.id}",
        key.role,
        "api_key",
        f"key:{key.id}",
        environment_ids=frozenset(key.environment_ids),
        queue_ids=frozenset(key.queue_ids),
    )
    return principal, key.expires_at


async def authenticate_api_key(ports: Ports, hasher: SecretHasher, token: str) -> Principal:
    """The principal of a presented key (see verify_api_key)."""
    return (await verify_api_key(ports, hasher, token))[0]
