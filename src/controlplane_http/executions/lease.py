"""The worker protocol's lease: a long poll for work on a queue (`LeaseController`), answered at once when work is
waiting, else when it arrives, the server stops or the worker hangs up."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from litestar import Controller, Request, Response, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.executions import lease_ends, leases, queries
from controlplane_domain.workers import bindings
from controlplane_http.agents.controller import agent_out
from controlplane_http.area import HttpArea
from controlplane_http.executions.controller import (
    ExecuteController,
    ExecutionController,
    execution_out,
    stream_options,
)
from controlplane_http.executions.leased import resolved_out
from controlplane_http.handlers import (
    WORKERS_ONLY,
    caller,
    errors,
)
from controlplane_http.operations.tracing import execution_step
from controlplane_http.teams.controller import team_out
from controlplane_wire.executions import (
    Lease,
    LeaseRequest,
)


async def _disconnected(request: Request[Any, Any, Any]) -> None:
    """Returns when the client closes the connection (the body has been read already)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


class LeaseController(Controller):
    path = "/api/v1/worker-queues"
    tags = ["workers"]

    @post(
        "/{queue_id:str}/lease",
        operation_id="leaseExecution",
        status_code=200,
        opt=WORKERS_ONLY,
        responses={**errors(404, 415), 204: ResponseSpec(None, description="No work arrived within wait_seconds")},
    )
    async def lease(
        self,
        queue_id: FromPath[str],
        data: JSONBody[LeaseRequest],
        scope: Scope,
        request: Request[Any, Any, Any],
    ) -> Response[Lease | None]:
        """Worker protocol: long poll for work; answers as soon as an execution is leased, or 204.

        Only a worker key (a bound one: on its queues only) or the service key may lease: the answer carries the
        secret values the execution needs."""
        ports, principal = caller(scope)
        if principal.bound:
            await bindings.check_queue(ports, principal, queue_id)
        organization_id = principal.organization_id
        stopping = stream_options(scope).stopping
        # Work waiting is leased at once; only an empty queue starts the long poll (a task, and another that
        # watches for the worker hanging up), unless the server is stopping.
        leased = await leases.try_lease(ports, organization_id, queue_id, data.worker_id)
        if leased is None and data.wait_seconds > 0 and not stopping.stopped:
            polling = asyncio.create_task(
                leases.lease(ports, organization_id, queue_id, data.worker_id, data.wait_seconds)
            )
            gone = asyncio.create_task(_disconnected(request))
            forget = stopping.on_stop(polling.cancel)  # the server's stop ends the wait: 204, the worker polls again
            try:
                done, _ = await asyncio.wait({polling, gone}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                forget()
            gone.cancel()
            if gone in done:  # the worker hung up: stop waiting for it, and give back what it can no longer get
                polling.cancel()  # (a lease being recorded is handed back by the use case)
                with contextlib.suppress(asyncio.CancelledError):
                    found = await polling
                    if found is not None:  # leased in the same turn as the hang-up
                        await lease_ends.hand_back(ports, found.execution)
                return Response(None, status_code=204)
            if polling.cancelled():  # the server is stopping
                return Response(None, status_code=204)
            leased = polling.result()
        if leased is None:
            return Response(None, status_code=204)
        execution = leased.execution
        execution_step(scope, "execution.lease", execution)
        body = Lease(
            execution=execution_out(execution),
            attempt=execution.attempt,
            lease_expires_at=execution.lease_expires_at,
            agent=None if leased.agent is None else agent_out(leased.agent),
            team=None if leased.team is None else team_out(leased.team),
            resolved=resolved_out(execution.id, leased.resolved),
        )
        return Response(body)


# The area's line is here, beside the last of its controllers: this module imports controller.py's.
AREA = HttpArea(
    (ExecuteController, ExecutionController, LeaseController), visible={"execution_id": queries.get_execution}
)
