"""Idempotency-Key: the first response to a creating request is kept 24 hours and replayed for the same body."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from controlplane_domain.errors import Conflict, ValidationFailed
from controlplane_domain.idempotency.entity import IDEMPOTENCY_TTL, IdempotencyRecord, RecordState
from controlplane_domain.ports import Ports
from controlplane_domain.retry import retry_transient

KEY_MAX_LENGTH = 255
IN_FLIGHT_TIMEOUT = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class Replay:
    status_code: int
    content_type: str
    body: bytes


@dataclass(frozen=True, slots=True)
class Reservation:
    """The key, reserved for this request to run now; `finish_idempotent_request` records its answer."""

    reserved_at: datetime


def _is_stale(record: IdempotencyRecord, now: object) -> bool:
    if record.state is RecordState.IN_FLIGHT:
        return record.created_at + IN_FLIGHT_TIMEOUT <= now  # type: ignore[operator]
    return record.expires_at <= now  # type: ignore[operator]


@retry_transient
async def begin_idempotent_request(
    ports: Ports, organization_id: str, key: str, fingerprint: str
) -> Replay | Reservation:
    """A reservation when this request runs now; the stored response when it already ran.

    ValidationFailed when the key was used with another request; Conflict while the first is in flight.
    """
    if not key.strip() or len(key) > KEY_MAX_LENGTH:
        raise ValidationFailed("Idempotency-Key", f"must be 1 to {KEY_MAX_LENGTH} characters", "header")
    now = ports.clock.now()
    async with ports.uow() as uow:
        existing = await uow.idempotency.get(organization_id, key)
        if existing is not None and _is_stale(existing, now):
            await uow.idempotency.delete(organization_id, key)
            existing = None
        if existing is None:
            record = IdempotencyRecord(
                organization_id=organization_id,
                key=key,
                fingerprint=fingerprint,
                state=RecordState.IN_FLIGHT,
                created_at=now,
                expires_at=now + IDEMPOTENCY_TTL,
            )
            try:
                await uow.idempotency.add(record)
            except Conflict:
                raise Conflict("a request with this Idempotency-Key is in flight") from None
            await uow.commit()
            return Reservation(now)
    if existing.fingerprint != fingerprint:
        raise ValidationFailed("Idempotency-Key", "was already used with a different request body or path", "header")
    if existing.state is RecordState.IN_FLIGHT or existing.status_code is None:
        raise Conflict("a request with this Idempotency-Key is in flight")
    return Replay(existing.status_code, existing.content_type or "application/json", existing.body or b"")


@retry_transient
async def finish_idempotent_request(
    ports: Ports,
    organization_id: str,
    key: str,
    reservation: Reservation,
    status_code: int,
    content_type: str,
    body: bytes,
) -> None:
    """Keep the response for replay; after a server error, release the key so a retry runs again. Only the
    reservation's own record: a request that ran past `IN_FLIGHT_TIMEOUT` may find the key reserved anew by a
    retry, whose record it must neither overwrite nor release."""
    async with ports.uow() as uow:
        record = await uow.idempotency.get(organization_id, key)
        if record is None or record.state is not RecordState.IN_FLIGHT or record.created_at != reservation.reserved_at:
            return
        if status_code >= 500:
            await uow.idempotency.delete(organization_id, key)
        else:
            done = replace(
                record, state=RecordState.DONE, status_code=status_code, content_type=content_type, body=body
            )
            await uow.idempotency.save(done)
        await uow.commit()


PURGE_BATCH = 1000


async def purge_expired_idempotency_records(ports: Ports, limit: int = PURGE_BATCH) -> int:
    """Delete up to `limit` recorded answers past their 24 hours (a background task runs this; they would
    otherwise stay forever, each a stored response body); how many."""
    async with ports.uow() as uow:
        deleted = await uow.idempotency.delete_expired(ports.clock.now(), limit)
        await uow.commit()
    return deleted
