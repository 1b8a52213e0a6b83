"""An Idempotency-Key's answer is recorded by the request that reserved it, never by one whose reservation went
stale and was taken over by a retry."""

from __future__ import annotations

import pytest

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_domain.errors import Conflict
from controlplane_domain.idempotency.entity import IDEMPOTENCY_TTL
from controlplane_domain.idempotency.usecases import (
    IN_FLIGHT_TIMEOUT,
    Replay,
    Reservation,
    begin_idempotent_request,
    finish_idempotent_request,
    purge_expired_idempotency_records,
)
from controlplane_domain.ports import Ports
from tests.contract.conftest import UowFactory


@pytest.mark.parametrize("first_status", [201, 500])
async def test_a_request_that_ran_past_its_reservation_leaves_the_retrys_alone(
    uow: UowFactory, first_status: int
) -> None:
    clock = ManualClock()
    ports = Ports(uow=uow, clock=clock, ids=UuidGenerator())
    first = await begin_idempotent_request(ports, "org", "k", "fp")
    assert isinstance(first, Reservation)
    clock.advance(IN_FLIGHT_TIMEOUT.total_seconds() + 1)  # the first still runs (a long stream, say)
    retry = await begin_idempotent_request(ports, "org", "k", "fp")
    assert isinstance(retry, Reservation), "a stale reservation is taken over"
    await finish_idempotent_request(ports, "org", "k", first, first_status, "application/json", b'{"first": 1}')
    with pytest.raises(Conflict):  # the retry is still in flight: its key is neither answered nor released
        await begin_idempotent_request(ports, "org", "k", "fp")
    await finish_idempotent_request(ports, "org", "k", retry, 201, "application/json", b'{"retry": 1}')
    assert await begin_idempotent_request(ports, "org", "k", "fp") == Replay(201, "application/json", b'{"retry": 1}')


async def test_answers_past_their_24_hours_are_purged_a_batch_at_a_time(uow: UowFactory) -> None:
    clock = ManualClock()
    ports = Ports(uow=uow, clock=clock, ids=UuidGenerator())
    for index in range(3):
        reserved = await begin_idempotent_request(ports, f"org-{index % 2}", f"old-{index}", "fp")
        assert isinstance(reserved, Reservation)
        await finish_idempotent_request(ports, f"org-{index % 2}", f"old-{index}", reserved, 201, "text/plain", b"x")
    clock.advance(IDEMPOTENCY_TTL.total_seconds() - 60)
    young = await begin_idempotent_request(ports, "org-0", "young", "fp")
    assert isinstance(young, Reservation)
    await finish_idempotent_request(ports, "org-0", "young", young, 201, "text/plain", b"y")
    assert await purge_expired_idempotency_records(ports) == 0  # nothing is 24 hours old yet
    clock.advance(61)
    assert await purge_expired_idempotency_records(ports, limit=2) == 2
    assert await purge_expired_idempotency_records(ports, limit=2) == 1
    assert await purge_expired_idempotency_records(ports) == 0
    async with uow() as work:
        assert await work.idempotency.get("org-0", "old-0") is None
        assert await work.idempotency.get("org-1", "old-1") is None
        kept = await work.idempotency.get("org-0", "young")
    assert kept is not None
    assert kept.body == b"y"
