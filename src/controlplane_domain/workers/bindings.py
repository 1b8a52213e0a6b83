"""A bound worker key's reach: the queues it is bound to and the queues of the environments it is bound to.

Every check returns at once for any other caller (an unbound worker key works on any queue of its organization;
the people's roles and the service key are not bound), so only a bound key pays for the reads. Another
organization's object is NotFound, as everywhere; one of the caller's organization outside its bindings is
Forbidden."""

from __future__ import annotations

from controlplane_domain.environments.usecases import require_queue
from controlplane_domain.errors import Forbidden
from controlplane_domain.executions.transitions import require_execution
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.principal import Principal


def _outside(queue_id: str) -> Forbidden:
    return Forbidden(f"this worker key is not bound to the worker queue {queue_id!r} or its environment")


async def _check_queues(uow: UnitOfWork, principal: Principal, queue_ids: set[str], *, gone_ok: bool = False) -> None:
    """Forbidden for a queue outside the bindings; NotFound for one not in the organization (or, `gone_ok`, a
    queue deleted since is no concern)."""
    for queue_id in sorted(queue_ids - principal.queue_ids):
        if gone_ok:
            queue = await uow.queues.get(principal.organization_id, queue_id)
            if queue is None:
                continue
        else:
            queue = await require_queue(uow, principal.organization_id, queue_id)
        if not principal.binds_queue(queue.id, queue.environment_id):
            raise _outside(queue_id)


async def check_queue(ports: Ports, principal: Principal, queue_id: str) -> None:
    """A lease from this queue is within the caller's bindings."""
    if not principal.bound or queue_id in principal.queue_ids:
        return
    async with ports.read() as uow:
        await _check_queues(uow, principal, {queue_id})


async def check_execution(ports: Ports, principal: Principal, execution_id: str) -> None:
    """An event batch or a completion of this execution is within the caller's bindings (its queue's)."""
    if not principal.bound:
        return
    async with ports.read() as uow:
        execution = await require_execution(uow, principal.organization_id, execution_id)
        await _check_queues(uow, principal, {execution.worker_queue_id})


async def _check_environment(uow: UnitOfWork, principal: Principal, environment_name: str) -> None:
    """Forbidden unless the environment of this name is one the key is bound to, or that of a queue it is bound
    to (a name the organization has no environment of is outside too: the same answer, nothing told)."""
    environment = await uow.environments.get_by_name(principal.organization_id, environment_name)
    if environment is not None:
        if environment.id in principal.environment_ids:
            return
        for queue_id in sorted(principal.queue_ids):
            queue = await uow.queues.get(principal.organization_id, queue_id)
            if queue is not None and queue.environment_id == environment.id:
                return
    raise Forbidden(f"this worker key is not bound to the environment {environment_name!r} or one of its queues")


async def check_worker(ports: Ports, principal: Principal, worker_id: str, environment_name: str) -> None:
    """A heartbeat of this worker is within the caller's bindings: the environment it names is one of the key's
    (its own, or that of one of its queues); and since it renews (or, reporting `idle` or `offline`, gives back)
    the leases its worker holds, the queue the worker last leased from and those of the executions it holds must
    be the key's. A worker not seen before registers freely, in an environment of the key's."""
    if not principal.bound:
        return
    async with ports.read() as uow:
        await _check_environment(uow, principal, environment_name)
        known = ports.heartbeats.latest(principal.organization_id, worker_id) if ports.heartbeats else None
        known = known or await uow.workers.get(principal.organization_id, worker_id)
        held = await uow.executions.running_for_worker(principal.organization_id, worker_id)
        queues = {execution.worker_queue_id for execution in held}
        if known is not None and known.queue_id is not None:
            queues.add(known.queue_id)
        await _check_queues(uow, principal, queues, gone_ok=True)
