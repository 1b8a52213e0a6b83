"""Executions: execute an agent or a team, read, follow (SSE), cancel; and the worker protocol."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from litestar import Controller, Response, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, JSONBody
from litestar.response import Stream
from litestar.types import Scope

from controlplane_domain.errors import ValidationFailed
from controlplane_domain.executions import completion, execute, queries
from controlplane_domain.executions.entity import Execution as DomainExecution
from controlplane_domain.executions.entity import ExecutionStatus, NewEvent, TargetType
from controlplane_domain.executions.ports import ExecutionFilter
from controlplane_domain.workers import bindings
from controlplane_http.crud import Listing, Read, Resource, routes
from controlplane_http.executions.streaming import (
    LastEventId,
    LastEventIdHeader,
    StreamOptions,
    event_stream,
    parse_last_event_id,
    sse_doc,
)
from controlplane_http.handlers import WORKER_PROTOCOL, caller, errors
from controlplane_http.operations.tracing import execution_step, trace_parent
from controlplane_http.signatures import optional, time_range
from controlplane_wire.executions import (
    CompleteRequest,
    EventsAppend,
    EventsAppended,
    ExecuteRequest,
    Execution,
    ExecutionEvent,
    ExecutionEventList,
    ExecutionList,
    ServerSentEvent,
)


def stream_options(scope: Scope) -> StreamOptions:
    """The app's SSE settings, read from its state (as `caller` reads the ports: no dependency to resolve)."""
    options: StreamOptions = scope["app"].state["stream_options"]
    return options


SSE_DOC = sse_doc(ServerSentEvent, "text/event-stream of the execution's events (the schema describes one event)")


def execution_out(execution: DomainExecution) -> Execution:
    return Execution(
        id=execution.id,
        organization_id=execution.organization_id,
        target_type=execution.target_type,
        agent_id=execution.agent_id,
        team_id=execution.team_id,
        worker_queue_id=execution.worker_queue_id,
        prompt=execution.prompt,
        status=execution.status,
        response=execution.response,
        error=execution.error,
        usage=execution.usage,
        attempt=execution.attempt,
        max_attempts=execution.max_attempts,
        worker_id=execution.worker_id,
        lease_expires_at=execution.lease_expires_at,
        cancel_requested=execution.cancel_requested,
        last_event_seq=execution.last_seq,
        created_at=execution.created_at,
        updated_at=execution.updated_at,
        queued_at=execution.queued_at,
        started_at=execution.started_at,
        finished_at=execution.finished_at,
        target_name=execution.target_name,
        model=execution.model,
        input_cost_per_million=execution.input_cost_per_million,
        output_cost_per_million=execution.output_cost_per_million,
        agent_team_id=execution.agent_team_id,
    )


async def _execute(target: TargetType, target_id: str, data: ExecuteRequest, scope: Scope) -> Response[Any]:
    ports, principal = caller(scope)
    command = execute.ExecuteCommand(
        prompt=data.prompt, worker_queue_id=data.worker_queue_id, stream=data.stream, trace_parent=trace_parent(scope)
    )
    execution = await execute.execute(ports, principal.organization_id, target, target_id, command, principal=principal)
    execution_step(scope, "execution.execute", execution)
    if data.stream:
        return await event_stream(ports, principal.organization_id, execution.id, 0, stream_options(scope))
    return Response(execution_out(execution), status_code=201)


EXECUTE_DOC = {201: ResponseSpec(Execution, description="The queued execution"), 200: SSE_DOC}


class ExecuteController(Controller):
    path = "/api/v1"
    tags = ["executions"]

    @post(
        "/agents/{agent_id:str}/execute",
        operation_id="executeAgent",
        status_code=201,
        responses={**errors(404, 415), **EXECUTE_DOC},
    )
    async def execute_agent(
        self, agent_id: FromPath[str], data: JSONBody[ExecuteRequest], scope: Scope
    ) -> Response[Any]:
        """Queue the agent's execution (201); with `stream: true`, answer with its event stream instead (200)."""
        return await _execute(TargetType.AGENT, agent_id, data, scope)

    @post(
        "/teams/{team_id:str}/execute",
        operation_id="executeTeam",
        status_code=201,
        responses={**errors(404, 415), **EXECUTE_DOC},
    )
    async def execute_team(self, team_id: FromPath[str], data: JSONBody[ExecuteRequest], scope: Scope) -> Response[Any]:
        """Queue the team's execution (201); with `stream: true`, answer with its event stream instead (200)."""
        return await _execute(TargetType.TEAM, team_id, data, scope)


def instant(name: str, text: str | None) -> datetime | None:
    """A `from` or `to` query parameter as an aware instant (UTC when it names no offset); 422 when it is none."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationFailed(name, "must be an RFC 3339 date and time (e.g. 2030-01-01T00:00:00Z)", "query") from None
    try:
        moment = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
    except OverflowError:  # the first or last hours of years 1 and 9999, moved to UTC
        moment = datetime.max.replace(tzinfo=UTC)
    if not 1970 < moment.year < 9999:
        raise ValidationFailed(name, "must be from 1971 to 9998", "query")
    return moment


def _where(*, since: str | None, until: str | None, **given: Any) -> ExecutionFilter:
    return ExecutionFilter(created_from=instant("from", since), created_to=instant("to", until), **given)


@routes(
    Resource("execution", "Execution", Execution, ExecutionList, execution_out),
    Listing(
        queries.list_executions,
        history=True,
        before=(
            *optional(status=ExecutionStatus, agent_id=str, team_id=str, worker_queue_id=str),
            *time_range(
                "created at or after (RFC 3339; UTC without an offset)",
                "created before (RFC 3339; UTC without an offset)",
            ),
        ),
        where=_where,
        doc="Filtered by status, target, queue and creation time (`from` inclusive, `to` exclusive).",
    ),
    Read(queries.get_execution),
)
@routes(
    Resource("event", "ExecutionEvent", ExecutionEvent, ExecutionEventList),
    Listing(
        queries.list_events,
        under="execution_id",
        ordered=False,
        codes=(404,),
        doc="Events in sequence order; `total` is the last sequence number, `offset` the number of events skipped.",
    ),
)
class ExecutionController(Controller):
    path = "/api/v1/executions"
    tags = ["executions"]

    @get(
        "/{execution_id:str}/stream",
        operation_id="streamExecution",
        responses={**errors(404), 200: SSE_DOC},
    )
    async def stream(
        self,
        execution_id: FromPath[str],
        scope: Scope,
        last_event_id_header: LastEventIdHeader = None,
        last_event_id: LastEventId = None,
    ) -> Stream:
        """Server-sent events from the first (or after `Last-Event-ID`) to the terminal `done` event."""
        ports, principal = caller(scope)
        after = parse_last_event_id(last_event_id_header, last_event_id)
        return await event_stream(ports, principal.organization_id, execution_id, after, stream_options(scope))

    @post("/{execution_id:str}/cancel", operation_id="cancelExecution", status_code=200, responses=errors(404, 409))
    async def cancel(self, execution_id: FromPath[str], scope: Scope) -> Execution:
        """Queued: cancelled at once. Running: its worker is told to stop (`cancel_requested`). Finished: 409."""
        ports, principal = caller(scope)
        return execution_out(await completion.cancel(ports, principal.organization_id, execution_id))

    @post(
        "/{execution_id:str}/events",
        operation_id="appendExecutionEvents",
        status_code=200,
        opt=WORKER_PROTOCOL,
        responses=errors(404, 409, 415),
    )
    async def append_events(
        self, execution_id: FromPath[str], data: JSONBody[EventsAppend], scope: Scope
    ) -> EventsAppended:
        """Worker protocol: append a batch of events to the current attempt (409 for a stale attempt)."""
        ports, principal = caller(scope)
        if principal.bound:
            await bindings.check_execution(ports, principal, execution_id)
        events = [NewEvent(type=e.type, data=e.data) for e in data.events]
        execution = await completion.append_events(
            ports, principal.organization_id, execution_id, data.worker_id, data.attempt, events
        )
        return EventsAppended(last_seq=execution.last_seq, cancel_requested=execution.cancel_requested)

    @post(
        "/{execution_id:str}/complete",
        operation_id="completeExecution",
        status_code=200,
        opt=WORKER_PROTOCOL,
        responses=errors(404, 409, 415),
    )
    async def complete(self, execution_id: FromPath[str], data: JSONBody[CompleteRequest], scope: Scope) -> Execution:
        """Worker protocol: finish the current attempt; the same completion again is harmless, a stale one 409."""
        ports, principal = caller(scope)
        if principal.bound:
            await bindings.check_execution(ports, principal, execution_id)
        command = completion.CompleteCommand(
            worker_id=data.worker_id,
            attempt=data.attempt,
            status=ExecutionStatus(data.status),
            response=data.response,
            error=data.error,
            usage=data.usage,
        )
        execution = await completion.complete(ports, principal.organization_id, execution_id, command)
        execution_step(scope, "execution.complete", execution)
        return execution_out(execution)
