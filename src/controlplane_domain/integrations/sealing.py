"""An integration's secret fields at rest: sealed together, as one JSON object, with the secrets' cipher and key.

They live in the integration's own row (`key_id`, `sealed`), not in the secrets table: they are not named secrets
of the organization (no name to clash, nothing listed by /secrets), and go with their integration."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from controlplane_domain.integrations.entity import Integration, integration_associated_data
from controlplane_domain.ports import UnitOfWork
from controlplane_domain.secrets.entity import SealedValue, SecretUnreadable
from controlplane_domain.secrets.ports import SecretCipher
from controlplane_domain.secrets.signing import reseal_in_batches


def seal_fields(
    cipher: SecretCipher, organization_id: str, integration_id: str, values: Mapping[str, Any]
) -> SealedValue:
    """The secret fields' values sealed as one value, bound to the integration."""
    text = json.dumps(dict(values), sort_keys=True)
    return SealedValue(
        cipher.key_id, cipher.encrypt(text, integration_associated_data(organization_id, integration_id))
    )


def open_fields(cipher: SecretCipher, integration: Integration) -> dict[str, Any]:
    """The integration's secret fields and their values ({} when none is set); SecretUnreadable when another key
    sealed them."""
    sealed = integration.sealed
    if sealed is None:
        return {}
    if sealed.key_id != cipher.key_id:
        raise SecretUnreadable(
            f"the secret fields of integration '{integration.name}' were sealed by key {sealed.key_id}, not by the "
            f"configured key {cipher.key_id} (finish `controlplane secrets rotate-key`, or configure that key)"
        )
    data = cipher.decrypt(sealed.data, integration_associated_data(integration.organization_id, integration.id))
    values: dict[str, Any] = json.loads(data)
    return values


ROTATION_BATCH = 100


async def rotate_integration_key(
    uow: Callable[[], UnitOfWork], old: SecretCipher, new: SecretCipher, *, batch: int = ROTATION_BATCH
) -> int:
    """Seal the secret fields of every integration of every organization with `new` (opened with `old`), `batch`
    integrations a transaction; how many were sealed anew. Those `new` sealed already are left alone, so a rotation
    that stopped halfway runs again to its end. `updated_at` stays: the values did not change."""

    async def pending(work: UnitOfWork) -> list[Integration]:
        return await work.integrations.sealed_elsewhere(new.key_id, batch)

    async def reseal(work: UnitOfWork, integration: Integration) -> None:
        values = open_fields(old, integration)
        sealed = seal_fields(new, integration.organization_id, integration.id, values)
        await work.integrations.update(replace(integration, sealed=sealed))

    return await reseal_in_batches(uow, pending, reseal)
