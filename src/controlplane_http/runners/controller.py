"""Runners: the organization's workers grouped by the runner (or host) they report; read-only."""

from __future__ import annotations

from litestar import Controller, get
from litestar.params import FromPath
from litestar.types import Scope

from controlplane_domain.runners import usecases
from controlplane_domain.runners.grouping import Runner as DomainRunner
from controlplane_http.crud import Listing, Resource, routes
from controlplane_http.handlers import caller, errors
from controlplane_wire.runners import Runner, RunnerList, StatusCounts


def runner_out(runner: DomainRunner) -> Runner:
    return Runner(
        name=runner.name,
        organization_id=runner.organization_id,
        worker_count=runner.worker_count,
        status_counts=StatusCounts(**runner.status_counts),
        worker_ids=runner.worker_ids,
        queue_ids=runner.queue_ids,
        environment_names=runner.environment_names,
        versions=runner.versions,
        capacity=runner.capacity,
        tasks_processed=runner.tasks_processed,
        first_registered_at=runner.first_registered_at,
        last_heartbeat_at=runner.last_heartbeat_at,
    )


@routes(Resource("runner", "Runner", Runner, RunnerList, runner_out), Listing(usecases.list_runners, ordered=False))
class RunnerController(Controller):
    path = "/api/v1/runners"
    tags = ["runners"]

    @get("/{name:str}", operation_id="getRunner", responses=errors(404))
    async def get_runner(self, name: FromPath[str], scope: Scope) -> Runner:
        ports, principal = caller(scope)
        return runner_out(await usecases.get_runner(ports, principal.organization_id, name))
