"""`controlplane secrets rotate-key`'s part for the webhooks' signing secrets (secrets/signing.py)."""

from __future__ import annotations

from collections.abc import Callable

from controlplane_domain.ports import UnitOfWork
from controlplane_domain.secrets.ports import SecretCipher
from controlplane_domain.secrets.signing import ROTATION_BATCH, reseal_all
from controlplane_domain.webhooks.entity import secret_data


async def rotate_signing_keys(
    uow: Callable[[], UnitOfWork], old: SecretCipher, new: SecretCipher, *, batch: int = ROTATION_BATCH
) -> int:
    """Seal every webhook's signing secret with `new` (opened with `old`); how many were sealed anew."""
    return await reseal_all(uow, lambda work: work.webhooks, secret_data, old, new, batch)
