"""Workflows: definitions (create, list, get, patch, delete), their runs (start, list, get, cancel) and each
run's stream of transitions (SSE, resumable with `Last-Event-ID`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import msgspec
from litestar import Controller, get, post
from litestar.params import FromPath, JSONBody
from litestar.response import Stream
from litestar.types import Scope

from controlplane_domain.ports import Ports
from controlplane_domain.workflows import runs, usecases
from controlplane_domain.workflows.entity import RunEvent, RunStatus, StepDefinition
from controlplane_domain.workflows.entity import StepRun as DomainStepRun
from controlplane_domain.workflows.entity import Workflow as DomainWorkflow
from controlplane_domain.workflows.entity import WorkflowRun as DomainRun
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, as_command, routes
from controlplane_http.executions.controller import stream_options
from controlplane_http.executions.frames import KEEPALIVE, RETRY
from controlplane_http.executions.streaming import (
    LastEventId,
    LastEventIdHeader,
    StreamOptions,
    parse_last_event_id,
    sse_doc,
)
from controlplane_http.handlers import caller, errors
from controlplane_http.signatures import optional
from controlplane_wire.base import to_domain, to_wire
from controlplane_wire.configuration import given_fields
from controlplane_wire.workflows import (
    RunCreate,
    RunServerSentEvent,
    StepRun,
    Workflow,
    WorkflowCreate,
    WorkflowList,
    WorkflowRun,
    WorkflowRunList,
    WorkflowUpdate,
)


def _update(data: WorkflowUpdate) -> usecases.UpdateWorkflow:
    given = given_fields(data)
    if "steps" in given:
        given["steps"] = tuple(to_domain(step, StepDefinition) for step in given["steps"])
    return usecases.UpdateWorkflow(**given)


def workflow_out(workflow: DomainWorkflow) -> Workflow:
    return to_wire(workflow, Workflow)


def run_out(run: DomainRun) -> WorkflowRun:
    definitions = {step.id: step for step in run.definition}
    steps = [_step_run(step, definitions[step.id]) for step in run.steps]
    return to_wire(run, WorkflowRun, steps=steps, last_event_seq=run.last_seq)


def _step_run(step: DomainStepRun, definition: StepDefinition) -> StepRun:
    return to_wire(step, StepRun, max_attempts=definition.max_attempts, depends_on=definition.depends_on)


@routes(
    Resource("workflow", "Workflow", Workflow, WorkflowList, workflow_out),
    Create(
        usecases.create_workflow,
        body=WorkflowCreate,
        command=as_command(usecases.CreateWorkflow),
        doc="""Steps: ids unique, dependencies known, no cycle (422 naming it), agents, teams and queues of the
        organization; a prompt reads `{{steps.<id>.output}}` only of a step it depends on.""",
    ),
    Listing(usecases.list_workflows, named=True),
    Read(usecases.get_workflow),
    Update(
        usecases.update_workflow,
        body=WorkflowUpdate,
        command=_update,
        doc="Changes the given fields; runs already started keep the definition they started with.",
    ),
    Remove(usecases.delete_workflow, doc="Deletes the definition; its runs stay and go on."),
)
class WorkflowController(Controller):
    path = "/api/v1/workflows"
    tags = ["workflows"]

    @post("/{workflow_id:str}/runs", operation_id="startWorkflowRun", status_code=201, responses=errors(404, 415))
    async def start_run(self, workflow_id: FromPath[str], data: JSONBody[RunCreate], scope: Scope) -> WorkflowRun:
        """A run, `running`, its first steps queued as executions on the queue (a step's own queue when it names
        one); 422 when an `{{input.x}}` a prompt reads is not in `input`."""
        ports, principal = caller(scope)
        command = runs.StartRun(worker_queue_id=data.worker_queue_id, input=data.input)
        return run_out(
            await runs.start_run(ports, principal.organization_id, workflow_id, command, principal=principal)
        )


RUN_SSE_DOC = sse_doc(RunServerSentEvent, "text/event-stream of the run's transitions (the schema describes one event)")


def encode_run_event(event: RunEvent) -> bytes:
    data = msgspec.json.encode(
        {
            "run_id": event.run_id,
            "seq": event.seq,
            "type": event.type.value,
            "data": event.data,
            "created_at": event.created_at,
        }
    )
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (event.seq, event.type.value.encode(), data)


async def _run_frames(
    ports: Ports, organization_id: str, run_id: str, after_seq: int, options: StreamOptions
) -> AsyncIterator[bytes]:
    """The stream's body: the retry hint, then each event's frame (a keep-alive comment when quiet), until the
    run's end, or the server's stop (its client resumes with Last-Event-ID, on this node or another)."""
    yield RETRY
    events = runs.follow_run(ports, organization_id, run_id, after_seq, options.keepalive_seconds)
    stop = asyncio.Event()
    forget = options.stopping.on_stop(stop.set)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        while True:
            following = asyncio.ensure_future(anext(events))
            await asyncio.wait({following, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if not following.done():
                following.cancel()
                return
            try:
                event = following.result()
            except StopAsyncIteration:
                return
            yield KEEPALIVE if event is None else encode_run_event(event)
    finally:
        forget()
        stopping.cancel()
        await events.aclose()


@routes(
    Resource("run", "WorkflowRun", WorkflowRun, WorkflowRunList, run_out),
    Listing(
        runs.list_runs,
        history=True,
        before=optional(workflow_id=str, status=RunStatus),
        where=runs.RunFilter,
    ),
    Read(runs.get_run, doc="The run with each step's status, execution id, attempt and output."),
)
class WorkflowRunController(Controller):
    path = "/api/v1/workflow-runs"
    tags = ["workflows"]

    @post("/{run_id:str}/cancel", operation_id="cancelWorkflowRun", status_code=200, responses=errors(404, 409))
    async def cancel_run(self, run_id: FromPath[str], scope: Scope) -> WorkflowRun:
        """Cancelled now: pending and running steps are cancelled, their executions too (a running one's worker
        is told to stop). 409 when the run already ended."""
        ports, principal = caller(scope)
        return run_out(await runs.cancel_run(ports, principal.organization_id, run_id))

    @get("/{run_id:str}/stream", operation_id="streamWorkflowRun", responses={**errors(404), 200: RUN_SSE_DOC})
    async def stream(
        self,
        run_id: FromPath[str],
        scope: Scope,
        last_event_id_header: LastEventIdHeader = None,
        last_event_id: LastEventId = None,
    ) -> Stream:
        """Server-sent events of the run's and its steps' transitions, from the first (or after `Last-Event-ID`)
        to the run's end."""
        ports, principal = caller(scope)
        run = await runs.get_run(ports, principal.organization_id, run_id)
        after = min(parse_last_event_id(last_event_id_header, last_event_id), run.last_seq)
        options = stream_options(scope)
        frames = _run_frames(ports, principal.organization_id, run.id, after, options)
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return Stream(frames, media_type="text/event-stream", headers=headers)


AREA = HttpArea(
    (WorkflowController, WorkflowRunController), visible={"workflow_id": usecases.get_workflow, "run_id": runs.get_run}
)
