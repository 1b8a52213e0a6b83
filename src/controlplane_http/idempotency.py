"""The HTTP side of Idempotency-Key: binds the use cases to the app's ports."""

from __future__ import annotations

from controlplane_domain.idempotency.usecases import (
    Replay,
    Reservation,
    begin_idempotent_request,
    finish_idempotent_request,
)
from controlplane_domain.ports import Ports

__all__ = ["Idempotency", "Replay", "Reservation"]


class Idempotency:
    def __init__(self, ports: Ports) -> None:
        self.ports = ports

    async def begin(self, organization_id: str, key: str, fingerprint: str) -> Replay | Reservation:
        return await begin_idempotent_request(self.ports, organization_id, key, fingerprint)

    async def finish(
        self, organization_id: str, key: str, reservation: Reservation, status: int, content_type: str, body: bytes
    ) -> None:
        await finish_idempotent_request(self.ports, organization_id, key, reservation, status, content_type, body)
