"""An Idempotency-Key's answer is recorded by the request that reserved it, never by one whose reservation went
stale and was taken over by a retry."""

from __future__ import annotations

import pytest

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_domain.errors import Conflict
from controlplane_domain.ports import Ports
from controlplane_domain.usecases.idempotency import (
    IN_FLIGHT_TIMEOUT,
    Replay,
    Reservation,
    begin_idempotent_request,
    finish_idempotent_request,
)
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
