"""Environments and their worker queues."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get, post
from litestar.params import FromPath, JSONBody, Parameter
from litestar.types import Scope

from controlplane_domain.environments import usecases
from controlplane_domain.environments.entity import QueueView
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, given_as, routes
from controlplane_http.handlers import Limit, Offset, OldestFirst, caller, errors, page_of, page_request
from controlplane_http.signatures import Query
from controlplane_wire.base import to_wire
from controlplane_wire.configuration import given_fields
from controlplane_wire.environments import (
    Environment,
    EnvironmentCreate,
    EnvironmentList,
    EnvironmentUpdate,
    WorkerQueue,
    WorkerQueueCreate,
    WorkerQueueList,
    WorkerQueueUpdate,
)


def queue_out(view: QueueView) -> WorkerQueue:
    counts = {"active_workers": view.active_workers, "queued_executions": view.queued_executions}
    return to_wire(view.queue, WorkerQueue, **counts)


QUEUES = Resource("queue", "WorkerQueue", WorkerQueue, WorkerQueueList, queue_out)
EnvironmentFilter = Annotated[str | None, Parameter(description="only this environment's queues")]


@routes(
    Resource("environment", "Environment", Environment, EnvironmentList),
    Create(usecases.create_environment, body=EnvironmentCreate, command=given_as(usecases.CreateEnvironment)),
    Listing(usecases.list_environments),
    Read(usecases.get_environment),
    Update(usecases.update_environment, body=EnvironmentUpdate, command=given_as(usecases.UpdateEnvironment)),
    Remove(usecases.delete_environment, doc="Delete an environment without worker queues (409 while it has some)."),
)
class EnvironmentController(Controller):
    path = "/api/v1/environments"
    tags = ["environments"]

    @post(
        "/{environment_id:str}/worker-queues",
        operation_id="createWorkerQueue",
        status_code=201,
        responses=errors(404, 409, 415),
    )
    async def create_queue(
        self, environment_id: FromPath[str], data: JSONBody[WorkerQueueCreate], scope: Scope
    ) -> WorkerQueue:
        ports, principal = caller(scope)
        command = usecases.CreateQueue(**given_fields(data))
        return queue_out(await usecases.create_queue(ports, principal.organization_id, environment_id, command))

    @get("/{environment_id:str}/worker-queues", operation_id="listEnvironmentWorkerQueues", responses=errors(404))
    async def list_environment_queues(
        self,
        environment_id: FromPath[str],
        scope: Scope,
        limit: Limit = 50,
        offset: Offset = 0,
        order: OldestFirst = None,
    ) -> WorkerQueueList:
        ports, principal = caller(scope)
        page = await usecases.list_queues(
            ports, principal.organization_id, page_request(limit, offset, order), environment_id=environment_id
        )
        return page_of(WorkerQueueList, page, queue_out)


@routes(
    QUEUES,
    Listing(usecases.list_queues, codes=(404,), before=(Query("environment_id", EnvironmentFilter),)),
    Read(usecases.get_queue),
    Update(usecases.update_queue, body=WorkerQueueUpdate, command=given_as(usecases.UpdateQueue)),
    Remove(usecases.delete_queue, doc="Delete a queue with no queued or running executions (409 otherwise)."),
)
class WorkerQueueController(Controller):
    path = "/api/v1/worker-queues"
    tags = ["worker-queues"]


AREA = HttpArea(
    (EnvironmentController, WorkerQueueController),
    visible={"environment_id": usecases.get_environment, "queue_id": usecases.get_queue},
)
