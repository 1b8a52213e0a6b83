"""Execute: a new execution of an agent or a team, queued on a worker queue (`POST /api/v1/agents/{id}/execute`,
`POST /api/v1/teams/{id}/execute`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from controlplane_domain.contexts.entity import NO_CONTEXT, ResolvedContext
from controlplane_domain.contexts.resolution import resolve
from controlplane_domain.errors import NotFound, ValidationFailed
from controlplane_domain.executions.entity import (
    PROMPT_MAX_LENGTH,
    Execution,
    ExecutionEvent,
    ExecutionStatus,
    RunWith,
    TargetType,
)
from controlplane_domain.executions.entity import numbered as _numbered
from controlplane_domain.executions.entity import status_event as _status
from controlplane_domain.executions.transitions import publish, remember, topic
from controlplane_domain.names import is_uuid
from controlplane_domain.policies.entity import Action, Resource
from controlplane_domain.policies.gate import guard
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.principal import Principal
from controlplane_domain.retry import retry_transient
from controlplane_domain.teams.usecases import require_team

S = ExecutionStatus


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecuteCommand:
    prompt: str
    worker_queue_id: str
    stream: bool = False
    trace_parent: str | None = None  # the creating request's trace (opaque here: see Execution.trace_parent)


@retry_transient
async def execute(
    ports: Ports,
    organization_id: str,
    target: TargetType,
    target_id: str,
    command: ExecuteCommand,
    *,
    principal: Principal | None = None,
) -> Execution:
    """Create an execution of an agent or a team on a worker queue of the organization, queued (unless a policy
    refuses it: PolicyDenied)."""
    async with ports.uow() as uow:
        queued = await uow.commit_with(
            lambda: queue_execution(ports, uow, organization_id, target, target_id, command, principal=principal)
        )
    await announce(ports, queued)
    return queued


async def queue_execution(
    ports: Ports,
    uow: UnitOfWork,
    organization_id: str,
    target: TargetType,
    target_id: str,
    command: ExecuteCommand,
    *,
    principal: Principal | None = None,
) -> Execution:
    """The execute's checks and writes in the caller's unit of work (a job's firing records its run in the same
    transaction): NotFound, ValidationFailed or PolicyDenied (the `execute` policies, docs/policies.md) before
    anything is written. The caller commits, then `announce`s."""
    if not command.prompt.strip():
        raise ValidationFailed("prompt", "must not be blank")
    if len(command.prompt) > PROMPT_MAX_LENGTH:
        raise ValidationFailed("prompt", f"must be at most {PROMPT_MAX_LENGTH} characters")
    if not is_uuid(command.worker_queue_id):
        raise ValidationFailed("worker_queue_id", "must be a UUID")
    request = {"prompt": command.prompt, "worker_queue_id": command.worker_queue_id, "stream": command.stream}
    await guard(ports, Action.EXECUTE, organization_id, principal, Resource(target.value, target_id), request, uow=uow)
    now = ports.clock.now()
    first, queued = new_queued(
        ports, organization_id, target, target_id, command.worker_queue_id, command.prompt, now,
        trace_parent=command.trace_parent,
    )  # fmt: skip
    context = await applicable_context(ports, uow, queued)
    if target is TargetType.AGENT:  # the queue's and the agent's checks with the write, which is the last
        queue_found, agent_found, queued = await uow.executions.add_if_found(queued, first, context)
        if not agent_found:
            raise NotFound("agent", target_id)
        if not queue_found:
            raise _no_such_queue()
    else:
        team = await require_team(uow, organization_id, target_id)
        queued = RunWith(target_name=team.name).applied(queued)
        if await uow.queues.get(organization_id, command.worker_queue_id) is None:
            raise _no_such_queue()
        await uow.executions.record(None, queued, first, context=context)
    return queued


def new_queued(
    ports: Ports,
    organization_id: str,
    target: TargetType,
    target_id: str | None,
    worker_queue_id: str,
    prompt: str,
    now: datetime,
    *,
    run_with: RunWith | None = None,
    workflow_run_id: str | None = None,
    workflow_step_id: str | None = None,
    trace_parent: str | None = None,
) -> tuple[list[ExecutionEvent], Execution]:
    """A new execution of the agent or the team `target_id` (none for a plan's), queued now on the worker queue:
    its first events (its status) and it. `run_with` is applied before it is queued."""
    pending = Execution(
        id=ports.ids.new_id(),
        organization_id=organization_id,
        target_type=target,
        agent_id=target_id if target is TargetType.AGENT else None,
        team_id=target_id if target is TargetType.TEAM else None,
        worker_queue_id=worker_queue_id,
        prompt=prompt,
        status=S.PENDING,
        max_attempts=ports.max_attempts,
        created_at=now,
        updated_at=now,
        workflow_run_id=workflow_run_id,
        workflow_step_id=workflow_step_id,
        trace_parent=trace_parent,
    )
    if run_with is not None:
        pending = run_with.applied(pending)
    queued = pending.transition(S.QUEUED, now)
    return _numbered(queued, [_status(queued)], now)


async def announce(ports: Ports, queued: Execution) -> None:
    """After the commit of a new execution: remembered, and its queue's waiters woken."""
    remember(ports, queued)
    await publish(ports, f"queue:{queued.worker_queue_id}", topic(queued))


async def applicable_context(ports: Ports, uow: UnitOfWork, execution: Execution) -> ResolvedContext | None:
    """Every context that applies to the new execution, merged, in one read (stored with the execution, in its
    write, only when not empty); no read at all in an organization this node knows has no context."""
    seen, organization_id = ports.contexts_seen, execution.organization_id
    if seen is not None and seen.known_empty(organization_id):
        return None
    generation = 0 if seen is None else seen.generation
    layers = await uow.contexts.applicable(
        organization_id, agent_id=execution.agent_id, team_id=execution.team_id, queue_id=execution.worker_queue_id
    )
    if seen is not None and not seen.knows(organization_id):
        seen.learned(organization_id, generation, bool(layers) or await uow.contexts.any_in(organization_id))
    resolved = resolve(layers)
    return None if resolved is NO_CONTEXT else resolved


def _no_such_queue() -> ValidationFailed:
    return ValidationFailed("worker_queue_id", "no worker queue of this organization has this id")
