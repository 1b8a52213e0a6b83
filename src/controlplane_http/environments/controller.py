"""Environments and their worker queues."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, delete, get, patch, post
from litestar.params import FromPath, JSONBody, Parameter
from litestar.types import Scope

from controlplane_domain.environments import usecases
from controlplane_domain.environments.entity import Environment as DomainEnvironment
from controlplane_domain.environments.entity import QueueView
from controlplane_http.handlers import (
    DANGLING,
    Force,
    Limit,
    Offset,
    OldestFirst,
    caller,
    deleted,
    errors,
    page_of,
    page_request,
)
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


def environment_out(environment: DomainEnvironment) -> Environment:
    return to_wire(environment, Environment)


def queue_out(view: QueueView) -> WorkerQueue:
    queue = view.queue
    return WorkerQueue(
        id=queue.id,
        organization_id=queue.organization_id,
        environment_id=queue.environment_id,
        name=queue.name,
        description=queue.description,
        status=queue.status,
        max_workers=queue.max_workers,
        heartbeat_interval_seconds=queue.heartbeat_interval_seconds,
        active_workers=view.active_workers,
        queued_executions=view.queued_executions,
        created_at=queue.created_at,
        updated_at=queue.updated_at,
    )


class EnvironmentController(Controller):
    path = "/api/v1/environments"
    tags = ["environments"]

    @post("/", operation_id="createEnvironment", status_code=201, responses=errors(409, 415))
    async def create_environment(self, data: JSONBody[EnvironmentCreate], scope: Scope) -> Environment:
        ports, principal = caller(scope)
        command = usecases.CreateEnvironment(**given_fields(data))
        return environment_out(await usecases.create_environment(ports, principal.organization_id, command))

    @get("/", operation_id="listEnvironments", responses=errors())
    async def list_environments(
        self, scope: Scope, limit: Limit = 50, offset: Offset = 0, order: OldestFirst = None
    ) -> EnvironmentList:
        ports, principal = caller(scope)
        page = await usecases.list_environments(ports, principal.organization_id, page_request(limit, offset, order))
        return page_of(EnvironmentList, page, environment_out)

    @get("/{environment_id:str}", operation_id="getEnvironment", responses=errors(404))
    async def get_environment(self, environment_id: FromPath[str], scope: Scope) -> Environment:
        ports, principal = caller(scope)
        return environment_out(await usecases.get_environment(ports, principal.organization_id, environment_id))

    @patch("/{environment_id:str}", operation_id="updateEnvironment", responses=errors(404, 409, 415))
    async def update_environment(
        self, environment_id: FromPath[str], data: JSONBody[EnvironmentUpdate], scope: Scope
    ) -> Environment:
        ports, principal = caller(scope)
        command = usecases.UpdateEnvironment(**given_fields(data))
        updated = await usecases.update_environment(ports, principal.organization_id, environment_id, command)
        return environment_out(updated)

    @delete(
        "/{environment_id:str}",
        operation_id="deleteEnvironment",
        status_code=204,
        responses=errors(404, 409),
        response_headers=DANGLING,
    )
    async def delete_environment(
        self, environment_id: FromPath[str], scope: Scope, force: Force = False
    ) -> Response[None]:
        """Delete an environment without worker queues (409 while it has some)."""
        ports, principal = caller(scope)
        return deleted(await usecases.delete_environment(ports, principal.organization_id, environment_id, force=force))

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


class WorkerQueueController(Controller):
    path = "/api/v1/worker-queues"
    tags = ["worker-queues"]

    @get("/", operation_id="listWorkerQueues", responses=errors(404))
    async def list_queues(
        self,
        scope: Scope,
        environment_id: Annotated[str | None, Parameter(description="only this environment's queues")] = None,
        limit: Limit = 50,
        offset: Offset = 0,
        order: OldestFirst = None,
    ) -> WorkerQueueList:
        ports, principal = caller(scope)
        page = await usecases.list_queues(
            ports, principal.organization_id, page_request(limit, offset, order), environment_id=environment_id
        )
        return page_of(WorkerQueueList, page, queue_out)

    @get("/{queue_id:str}", operation_id="getWorkerQueue", responses=errors(404))
    async def get_queue(self, queue_id: FromPath[str], scope: Scope) -> WorkerQueue:
        ports, principal = caller(scope)
        return queue_out(await usecases.get_queue(ports, principal.organization_id, queue_id))

    @patch("/{queue_id:str}", operation_id="updateWorkerQueue", responses=errors(404, 409, 415))
    async def update_queue(
        self, queue_id: FromPath[str], data: JSONBody[WorkerQueueUpdate], scope: Scope
    ) -> WorkerQueue:
        ports, principal = caller(scope)
        command = usecases.UpdateQueue(**given_fields(data))
        return queue_out(await usecases.update_queue(ports, principal.organization_id, queue_id, command))

    @delete(
        "/{queue_id:str}",
        operation_id="deleteWorkerQueue",
        status_code=204,
        responses=errors(404, 409),
        response_headers=DANGLING,
    )
    async def delete_queue(self, queue_id: FromPath[str], scope: Scope, force: Force = False) -> Response[None]:
        """Delete a queue with no queued or running executions (409 otherwise)."""
        ports, principal = caller(scope)
        return deleted(await usecases.delete_queue(ports, principal.organization_id, queue_id, force=force))
