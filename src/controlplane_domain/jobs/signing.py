"""`controlplane secrets rotate-key`'s part for the webhook jobs' signing secrets (secrets/signing.py)."""

from __future__ import annotations

from collections.abc import Callable

from controlplane_domain.jobs.entity import secret_data
from controlplane_domain.ports import UnitOfWork
from controlplane_domain.secrets.ports import SecretCipher
from controlplane_domain.secrets.signing import ROTATION_BATCH, reseal_all


async def rotate_signing_keys(
    uow: Callable[[], UnitOfWork], old: SecretCipher, new: SecretCipher, *, batch: int = ROTATION_BATCH
) -> int:
    """Seal every webhook job's signing secret with `new` (opened with `old`); how many were sealed anew."""
    return await reseal_all(uow, lambda work: work.jobs, secret_data, old, new, batch)
