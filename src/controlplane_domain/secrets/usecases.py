"""Secret use cases: create, read, change, delete (the value is written, never read back), and the accesses."""

from __future__ import annotations

from dataclasses import dataclass, replace

from controlplane_domain import crud
from controlplane_domain.crud import Area
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.policies.entity import Action, Resource
from controlplane_domain.policies.gate import guard
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.principal import Principal
from controlplane_domain.references import Dangling, Kind, Target, check_unreferenced
from controlplane_domain.retry import retry_transient
from controlplane_domain.secrets.entity import (
    MAX_VALUE_BYTES,
    SECRET_NAME,
    SealedValue,
    Secret,
    SecretAccess,
    SecretsKeyMissing,
    associated_data,
)
from controlplane_domain.secrets.ports import SecretCipher


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateSecret:
    name: str
    value: str
    description: str | None = None

    def __repr__(self) -> str:  # the value never reaches a log line, not even by a repr
        return f"CreateSecret(name={self.name!r}, value=<hidden>, description={self.description!r})"


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateSecret:
    name: str | Unset = UNSET
    value: str | Unset = UNSET
    description: str | Unset | None = UNSET

    def __repr__(self) -> str:
        shown = "<unset>" if isinstance(self.value, Unset) else "<hidden>"
        return f"UpdateSecret(name={self.name!r}, value={shown}, description={self.description!r})"


def check_secret_name(field: str, name: str) -> None:
    if SECRET_NAME.fullmatch(name) is None:
        raise ValidationFailed(field, "must be a letter or _, then up to 127 letters, digits or _")


def _check_value(value: str) -> None:
    if not value:
        raise ValidationFailed("value", "must not be empty")
    if len(value.encode()) > MAX_VALUE_BYTES:
        raise ValidationFailed("value", f"must be at most {MAX_VALUE_BYTES} bytes (UTF-8)")


def require_cipher(ports: Ports) -> SecretCipher:
    """The configured cipher, or SecretsKeyMissing (503)."""
    if ports.secrets_cipher is None:
        raise SecretsKeyMissing()
    return ports.secrets_cipher


def seal(cipher: SecretCipher, organization_id: str, secret_id: str, value: str) -> SealedValue:
    return SealedValue(cipher.key_id, cipher.encrypt(value, associated_data(organization_id, secret_id)))


SECRETS = Area("secret", lambda uow: uow.secrets)


async def require_secret(uow: UnitOfWork, organization_id: str, secret_id: str, *, lock: bool = False) -> Secret:
    """The secret of this organization, or NotFound."""
    return await crud.require(SECRETS, uow, organization_id, secret_id, lock=lock)


async def may_write(
    ports: Ports,
    uow: UnitOfWork,
    secret: Secret,
    operation: str,
    principal: Principal | None,
    *,
    value_changed: bool,
) -> None:
    """The policies' gate (`secret.write`): PolicyDenied when an enforcing policy refuses. The value never reaches
    a policy (nor the decision log): only whether it changes."""
    resource = Resource("secret", secret.id, {"name": secret.name})
    request = {
        "operation": operation,
        "name": secret.name,
        "description": secret.description,
        "value_changed": value_changed,
    }
    await guard(ports, Action.SECRET_WRITE, secret.organization_id, principal, resource, request, uow=uow)


@retry_transient
async def create_secret(
    ports: Ports, organization_id: str, command: CreateSecret, *, principal: Principal | None = None
) -> Secret:
    check_secret_name("name", command.name)
    _check_value(command.value)
    cipher = require_cipher(ports)
    secret_id = ports.ids.new_id()
    sealed = seal(cipher, organization_id, secret_id, command.value)
    secret = crud.new(Secret, ports, organization_id, command, ("value",), id=secret_id, version=1, sealed=sealed)

    async def allowed(uow: UnitOfWork, secret: Secret) -> Secret:
        await may_write(ports, uow, secret, "create", principal, value_changed=True)
        return secret

    return await crud.add(SECRETS, ports, secret, allowed)


async def get_secret(ports: Ports, organization_id: str, secret_id: str) -> Secret:
    return await crud.get(SECRETS, ports, organization_id, secret_id)


async def list_secrets(ports: Ports, organization_id: str, page: PageRequest) -> Page[Secret]:
    return await crud.list_page(SECRETS, ports, organization_id, page)


@retry_transient
async def update_secret(
    ports: Ports, organization_id: str, secret_id: str, command: UpdateSecret, *, principal: Principal | None = None
) -> Secret:
    """Change the given fields; a value (even the same one) seals it anew and bumps `version`."""
    if not isinstance(command.name, Unset):
        check_secret_name("name", command.name)
    cipher = None
    if not isinstance(command.value, Unset):
        _check_value(command.value)
        cipher = require_cipher(ports)

    async def sealed_and_allowed(uow: UnitOfWork, updated: Secret, stored: Secret) -> Secret:
        if cipher is not None and not isinstance(command.value, Unset):
            sealed = seal(cipher, organization_id, secret_id, command.value)
            updated = replace(updated, sealed=sealed, version=stored.version + 1)
        await may_write(ports, uow, updated, "update", principal, value_changed=cipher is not None)
        return updated

    return await crud.patch_in(SECRETS, ports, organization_id, secret_id, command, sealed_and_allowed, ("value",))


@retry_transient
async def delete_secret(
    ports: Ports, organization_id: str, secret_id: str, *, principal: Principal | None = None, force: bool = False
) -> Dangling:
    """Delete the secret and its accesses. Agents, teams and custom integrations naming it: 409 IN_USE, or with
    `force` they keep the name (references.py; a lease then reports it missing)."""
    async with ports.uow() as uow:
        secret = await require_secret(uow, organization_id, secret_id, lock=True)
        await may_write(ports, uow, secret, "delete", principal, value_changed=False)
        target = Target(Kind.SECRET, secret_id, secret.name)
        dangling = await check_unreferenced(uow, organization_id, target, force=force)
        await uow.secrets.delete(organization_id, secret_id)
        await uow.commit()
    return dangling


async def list_secret_accesses(
    ports: Ports, organization_id: str, secret_id: str, page: PageRequest
) -> Page[SecretAccess]:
    async with ports.read() as uow:
        await require_secret(uow, organization_id, secret_id)
        items, total = await uow.secrets.access_page(organization_id, secret_id, page)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)
