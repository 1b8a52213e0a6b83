"""Runners: the organization's workers grouped by the runner (or host) they report; read-only."""

from __future__ import annotations

from litestar import Controller, get
from litestar.params import FromPath
from litestar.types import Scope

from controlplane_domain.runners import usecases
from controlplane_domain.runners.grouping import Runner as DomainRunner
from controlplane_http.crud import Listing, Resource, routes
from controlplane_http.handlers import caller, errors
from controlplane_wire.base import to_wire
from controlplane_wire.runners import Runner, RunnerList


def runner_out(runner: DomainRunner) -> Runner:
    return to_wire(runner, Runner)


@routes(Resource("runner", "Runner", Runner, RunnerList, runner_out), Listing(usecases.list_runners, ordered=False))
class RunnerController(Controller):
    path = "/api/v1/runners"
    tags = ["runners"]

    @get("/{name:str}", operation_id="getRunner", responses=errors(404))
    async def get_runner(self, name: FromPath[str], scope: Scope) -> Runner:
        ports, principal = caller(scope)
        return runner_out(await usecases.get_runner(ports, principal.organization_id, name))
