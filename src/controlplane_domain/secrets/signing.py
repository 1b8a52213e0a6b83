"""Re-sealing signing secrets with a new key (`controlplane secrets rotate-key`): each area that keeps some calls
`reseal_all` with its repository (webhooks/signing.py, jobs/signing.py).

Like the secrets' rotation (secrets/reveal.py), a batch a transaction, and only what another key sealed: a
rotation that stopped halfway runs again to its end. `updated_at` stays: the secrets did not change."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from controlplane_domain.ports import UnitOfWork
from controlplane_domain.secrets.entity import SealedValue, SecretUnreadable
from controlplane_domain.secrets.ports import SecretCipher

ROTATION_BATCH = 100
T = TypeVar("T")


def _resealed(old: SecretCipher, new: SecretCipher, sealed: SealedValue, bound_to: bytes) -> SealedValue:
    if sealed.key_id != old.key_id:
        raise SecretUnreadable(f"a signing secret was sealed by key {sealed.key_id}, neither the old nor the new key")
    return SealedValue(new.key_id, new.encrypt(old.decrypt(sealed.data, bound_to), bound_to))


async def reseal_all(
    uow: Callable[[], UnitOfWork],
    area: Callable[[UnitOfWork], Any],
    bound_to: Callable[[str, str], bytes],
    old: SecretCipher,
    new: SecretCipher,
    batch: int = ROTATION_BATCH,
) -> int:
    """Seal one area's signing secrets with `new` (opened with `old`), a batch a transaction; how many were sealed
    anew. `area`: its repository in a unit of work (`sealed_elsewhere`, `update`); `bound_to`: what each item's
    secret is bound to. A secret `old` cannot open raises the cipher's error (nothing of its batch changes)."""

    async def pending(work: UnitOfWork) -> Sequence[Any]:
        found: Sequence[Any] = await area(work).sealed_elsewhere(new.key_id, batch)
        return found

    async def reseal(work: UnitOfWork, item: Any) -> None:
        assert item.secret is not None  # (what sealed_elsewhere answers has one)
        sealed = _resealed(old, new, item.secret, bound_to(item.organization_id, item.id))
        await area(work).update(replace(item, secret=sealed))

    return await reseal_in_batches(uow, pending, reseal)


async def reseal_in_batches(
    uow: Callable[[], UnitOfWork],
    pending: Callable[[UnitOfWork], Awaitable[Sequence[T]]],
    reseal: Callable[[UnitOfWork, T], Awaitable[None]],
) -> int:
    """A key rotation's loop: what `pending` finds still sealed by another key (a batch), each `reseal`ed, in one
    transaction a batch, until it finds nothing; how many were sealed anew."""
    done = 0
    while True:
        async with uow() as work:
            found = await pending(work)
            if not found:
                return done
            for item in found:
                await reseal(work, item)
            await work.commit()
        done += len(found)
