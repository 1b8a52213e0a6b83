"""Secret values leave the store only here: for a lease (each read recorded) and for a key rotation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from controlplane_domain.audit.context import explicitly
from controlplane_domain.audit.usecases import record
from controlplane_domain.errors import NotFound
from controlplane_domain.ports import IdGenerator, UnitOfWork
from controlplane_domain.secrets.entity import Secret, SecretAccess, SecretUnreadable, associated_data
from controlplane_domain.secrets.ports import SecretCipher
from controlplane_domain.secrets.signing import reseal_in_batches


def open_value(cipher: SecretCipher, secret: Secret) -> str:
    """The secret's plaintext; SecretUnreadable when another key sealed it."""
    if secret.sealed.key_id != cipher.key_id:
        raise SecretUnreadable(
            f"secret '{secret.name}' was sealed by key {secret.sealed.key_id}, not by the configured key "
            f"{cipher.key_id} (finish `controlplane secrets rotate-key`, or configure the key it was sealed with)"
        )
    return cipher.decrypt(secret.sealed.data, associated_data(secret.organization_id, secret.id))


async def reveal_for_lease(
    uow: UnitOfWork,
    cipher: SecretCipher,
    ids: IdGenerator,
    organization_id: str,
    names: Sequence[str],
    *,
    execution_id: str,
    worker_id: str,
    now: datetime,
) -> dict[str, str]:
    """The values of the named secrets, for the worker holding the execution's lease; one access recorded per
    secret and its `last_accessed_at` set, in the caller's unit of work (commit it with the lease).
    NotFound when a name is no longer a secret of the organization."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return {}
    found = {secret.name: secret for secret in await uow.secrets.get_by_names(organization_id, wanted, for_update=True)}
    missing = [name for name in wanted if name not in found]
    if missing:
        raise NotFound("secret", missing[0])
    values = {name: open_value(cipher, found[name]) for name in wanted}
    accesses = [
        SecretAccess(
            id=ids.new_id(),
            organization_id=organization_id,
            secret_id=found[name].id,
            execution_id=execution_id,
            worker_id=worker_id,
            accessed_at=now,
        )
        for name in wanted
    ]
    await uow.secrets.add_accesses(accesses)
    for name in wanted:
        await uow.secrets.update(replace(found[name], last_accessed_at=now))
    return values


ROTATION_BATCH = 100


async def rotate_key(
    uow: Callable[[], UnitOfWork], old: SecretCipher, new: SecretCipher, *, batch: int = ROTATION_BATCH
) -> int:
    """Seal every secret of every organization with `new` (opened with `old`), `batch` secrets a transaction;
    how many were sealed anew. Secrets `new` sealed already are left alone, so a rotation that stopped halfway
    runs again to its end. SecretUnreadable when a secret was sealed by neither key (nothing after it changes).
    `version` and `updated_at` stay: the values did not change."""

    async def pending(work: UnitOfWork) -> list[Secret]:
        return await work.secrets.sealed_elsewhere(new.key_id, batch)

    async def reseal(work: UnitOfWork, secret: Secret) -> None:
        value = open_value(old, secret)
        data = new.encrypt(value, associated_data(secret.organization_id, secret.id))
        with explicitly():  # recorded as what it is (when an audit context is set: the command line's)
            await work.secrets.update(replace(secret, sealed=replace(secret.sealed, key_id=new.key_id, data=data)))
        await record(
            work,
            organization_id=secret.organization_id,
            action="secret.rotate_key",
            resource_type="secret",
            resource_id=secret.id,
            details={"from_key_id": old.key_id, "to_key_id": new.key_id},
        )

    return await reseal_in_batches(uow, pending, reseal)
