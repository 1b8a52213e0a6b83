"""Runners: the organization's workers grouped by the runner (or host) they report; read-only."""

from __future__ import annotations

from litestar import Controller, get
from litestar.params import FromPath
from litestar.types import Scope

from controlplane_domain.runners import usecases
from controlplane_domain.runners.grouping import Runner as DomainRunner
from controlplane_http.handlers import Limit, Offset, caller, errors, page_of, page_request
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


class RunnerController(Controller):
    path = "/api/v1/runners"
    tags = ["runners"]

    @get("/", operation_id="listRunners", responses=errors())
    async def list_runners(self, scope: Scope, limit: Limit = 50, offset: Offset = 0) -> RunnerList:
        ports, principal = caller(scope)
        page = await usecases.list_runners(ports, principal.organization_id, page_request(limit, offset))
        return page_of(RunnerList, page, runner_out)

    @get("/{name:str}", operation_id="getRunner", responses=errors(404))
    async def get_runner(self, name: FromPath[str], scope: Scope) -> Runner:
        ports, principal = caller(scope)
        return runner_out(await usecases.get_runner(ports, principal.organization_id, name))
