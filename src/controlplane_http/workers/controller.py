"""Workers: heartbeat (registers unknown workers), list, get."""

from __future__ import annotations

from litestar import Controller, get, post
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.environments.entity import MISSED_HEARTBEATS_BEFORE_OFFLINE
from controlplane_domain.ports import Clock
from controlplane_domain.workers import bindings, usecases
from controlplane_domain.workers.entity import Worker as DomainWorker
from controlplane_http.handlers import (
    WORKER_PROTOCOL,
    Limit,
    Offset,
    OldestFirst,
    caller,
    errors,
    page_of,
    page_request,
)
from controlplane_wire.base import to_domain, to_wire
from controlplane_wire.workers import HeartbeatResponse, Worker, WorkerCommandOut, WorkerHeartbeat, WorkerList


def worker_out(worker: DomainWorker, clock: Clock) -> Worker:
    status = worker.effective_status(clock.now())
    return to_wire(worker, Worker, id=worker.worker_id, status=status, reported_status=worker.status)


class WorkerController(Controller):
    path = "/api/v1/workers"
    tags = ["workers"]

    @post(
        "/heartbeat",
        operation_id="workerHeartbeat",
        status_code=200,
        opt=WORKER_PROTOCOL,
        responses=errors(400, 415),
    )
    async def heartbeat(self, data: JSONBody[WorkerHeartbeat], scope: Scope) -> HeartbeatResponse:
        """Worker protocol: register the worker, renew the leases it holds, answer the commands for it.

        An unknown `worker_id` registers. A bound worker key's heartbeat is refused (403) when it names an
        environment outside its bindings (neither one it is bound to nor that of a queue it is bound to), or for a
        worker that was last on, or holds executions of, a queue outside them."""
        ports, principal = caller(scope)
        if principal.bound:
            await bindings.check_worker(ports, principal, data.worker_id, data.environment_name)
        command = to_domain(data, usecases.RecordHeartbeat)
        receipt = await usecases.record_heartbeat(ports, principal.organization_id, command)
        worker = receipt.worker
        return HeartbeatResponse(
            worker_id=worker.worker_id,
            organization_id=worker.organization_id,
            status=worker.status,
            registered=receipt.registered,
            received_at=receipt.received_at,
            heartbeat_interval_seconds=worker.heartbeat_interval_seconds,
            offline_after_seconds=worker.heartbeat_interval_seconds * MISSED_HEARTBEATS_BEFORE_OFFLINE,
            leases_extended=receipt.leases_extended,
            commands=[WorkerCommandOut(type=c.type, execution_id=c.execution_id) for c in receipt.commands],
        )

    @get("/", operation_id="listWorkers", responses=errors())
    async def list_workers(
        self, scope: Scope, limit: Limit = 50, offset: Offset = 0, order: OldestFirst = None
    ) -> WorkerList:
        ports, principal = caller(scope)
        page = await usecases.list_workers(ports, principal.organization_id, page_request(limit, offset, order))
        return page_of(WorkerList, page, lambda worker: worker_out(worker, ports.clock))

    @get("/{worker_id:str}", operation_id="getWorker", responses=errors(404))
    async def get_worker(self, worker_id: FromPath[str], scope: Scope) -> Worker:
        ports, principal = caller(scope)
        return worker_out(await usecases.get_worker(ports, principal.organization_id, worker_id), ports.clock)
