"""Workers: heartbeat (registers unknown workers), list, get."""

from __future__ import annotations

from litestar import Controller, post
from litestar.params import JSONBody
from litestar.types import Scope

from controlplane_domain.environments.entity import MISSED_HEARTBEATS_BEFORE_OFFLINE
from controlplane_domain.ports import Ports
from controlplane_domain.workers import bindings, usecases
from controlplane_domain.workers.entity import Worker as DomainWorker
from controlplane_http.area import HttpArea
from controlplane_http.crud import Listing, Read, Resource, routes
from controlplane_http.handlers import WORKER_PROTOCOL, caller, errors
from controlplane_wire.base import to_domain, to_wire
from controlplane_wire.workers import HeartbeatResponse, Worker, WorkerCommandOut, WorkerHeartbeat, WorkerList


def worker_out(worker: DomainWorker, scope: Scope) -> Worker:
    """A worker as answered: its status the effective one, by the app's clock."""
    ports: Ports = scope["app"].state["ports"]
    status = worker.effective_status(ports.clock.now())
    return to_wire(worker, Worker, id=worker.worker_id, status=status, reported_status=worker.status)


@routes(
    Resource("worker", "Worker", Worker, WorkerList, worker_out, scoped=True),
    Listing(usecases.list_workers),
    Read(usecases.get_worker),
)
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


AREA = HttpArea((WorkerController,), visible={"worker_id": usecases.get_worker})
