"""Heartbeat writes are bounded: a worker repeating itself within a second costs no write,
while last-seen stays within a second and every change is recorded at once."""

from __future__ import annotations

from controlplane_adapters.clock import ManualClock
from controlplane_domain.usecases import workers
from tests.support import memory_ports


async def test_repeated_heartbeats_within_a_second_write_once() -> None:
    clock = ManualClock()
    ports = memory_ports(clock)
    beat = workers.RecordHeartbeat(worker_id="w", environment_name="e", tasks_processed=1)
    first = await workers.record_heartbeat(ports, "org", beat)
    clock.advance(0.4)
    second = await workers.record_heartbeat(ports, "org", beat)
    assert second.worker.last_heartbeat_at == first.worker.last_heartbeat_at, "nothing written"
    stored = await workers.get_worker(ports, "org", "w")
    assert clock.now() - stored.last_heartbeat_at < workers.LAST_SEEN_PRECISION
    clock.advance(0.7)
    third = await workers.record_heartbeat(ports, "org", beat)
    assert (await workers.get_worker(ports, "org", "w")).last_heartbeat_at == third.received_at
    changed = workers.RecordHeartbeat(worker_id="w", environment_name="e", tasks_processed=2)
    await workers.record_heartbeat(ports, "org", changed)
    assert (await workers.get_worker(ports, "org", "w")).tasks_processed == 2, "a change is written at once"
