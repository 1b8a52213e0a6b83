"""The heartbeat buffer's flush (`heartbeats.HeartbeatBuffer`): the waiting reports written, in one transaction
or in batches, and what cannot be written given back or dropped (docs/operations.md)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from controlplane_domain.ports import Ports
from controlplane_domain.workers.entity import Worker
from controlplane_domain.workers.heartbeats import HeartbeatBuffer

log = logging.getLogger(__name__)

FLUSH_BATCH = 50
"""The `batch` of a flush whose writes hold the event loop while they run (a store that writes in the loop's own
thread): a large fleet's flush (thousands of upserts) then lets the requests that came meanwhile run between its
batches. Where the writes wait on the network, one transaction is cheaper and holds nothing (the runtime chooses,
controlplane_runtime/tasks.py)."""


async def flush_heartbeats(ports: Ports, batch: int | None = None) -> int:
    """Write every report waiting in the heartbeat buffer, in one transaction, or in transactions of at most
    `batch` letting other work run between them; how many were written.

    Reports that cannot be written (the database is away) go back to the buffer for the next flush, with every
    report after them. When the transaction of several fails, each of its reports is tried in a transaction of its
    own, so that a report the store will never take cannot hold back every other worker's at every flush: if the
    store takes some and refuses others, the refused are dropped and logged (the worker's next heartbeat is a new
    report)."""
    buffer = ports.heartbeats
    reports = buffer.drain() if buffer is not None else []
    if not reports or buffer is None:
        return 0
    written = done = 0
    try:
        while done < len(reports):
            if done:
                await asyncio.sleep(0)  # the requests that came meanwhile run before the next batch
            some = reports[done : done + (batch or len(reports))]
            written += await _write_batch(ports, buffer, some)
            done += len(some)
        return written
    except BaseException:  # cancelled, or the store away: what is not written waits for the next flush
        buffer.restore(reports[done:])
        raise
    finally:
        buffer.settle(reports)  # reads found them in flight until now; written, they are the store's


async def _write_batch(ports: Ports, buffer: HeartbeatBuffer, reports: list[Worker]) -> int:
    """`reports` in one transaction, or each in its own when that fails (see `flush_heartbeats`)."""
    if len(reports) > 1:  # (one report alone is what `_save_each` writes, without a second try)
        try:
            await _save_reports(ports, reports)
            return len(reports)
        except Exception as exc:  # some report may be at fault: each on its own
            log.info("writing %d heartbeat reports failed (%r); writing each on its own", len(reports), exc)
    return await _save_each(ports, buffer, reports)


async def _save_reports(ports: Ports, reports: Sequence[Worker]) -> None:
    async with ports.uow() as uow:
        await uow.workers.save_reports(reports)
        await uow.commit()


async def _save_each(ports: Ports, buffer: HeartbeatBuffer, reports: list[Worker]) -> int:
    """`reports` one transaction each; how many were written (see `flush_heartbeats`)."""
    refused: list[Worker] = []
    failure: Exception | None = None
    for index, report in enumerate(reports):
        try:
            await _save_reports(ports, [report])
        except Exception as exc:
            refused.append(report)
            failure = failure or exc
        except BaseException:
            buffer.restore([*refused, *reports[index:]])
            raise
    if failure is None:
        return len(reports)
    if len(refused) == len(reports):  # nothing was taken: the store is away, not the reports at fault
        buffer.restore(refused)
        raise failure
    workers = ", ".join(f"{report.organization_id}/{report.worker_id}" for report in refused)
    log.error("dropped heartbeat reports the store refused (%s): %r", workers, failure)
    return len(reports) - len(refused)
