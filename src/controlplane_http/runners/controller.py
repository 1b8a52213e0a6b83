"""Runners: the organization's workers grouped by the runner (or host) they report; read-only."""

from __future__ import annotations

from litestar import Controller

from controlplane_domain.runners import usecases
from controlplane_domain.runners.grouping import Runner as DomainRunner
from controlplane_http.area import HttpArea
from controlplane_http.crud import Listing, Read, Resource, routes
from controlplane_wire.base import to_wire
from controlplane_wire.runners import Runner, RunnerList


def runner_out(runner: DomainRunner) -> Runner:
    return to_wire(runner, Runner)


@routes(
    Resource("runner", "Runner", Runner, RunnerList, runner_out, id="name"),
    Listing(usecases.list_runners, ordered=False),
    Read(usecases.get_runner),
)
class RunnerController(Controller):
    path = "/api/v1/runners"
    tags = ["runners"]


AREA = HttpArea((RunnerController,))
