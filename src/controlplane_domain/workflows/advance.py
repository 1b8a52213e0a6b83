"""How a run advances: a step's execution ends (completed, failed, cancelled, timed out: whoever ended it, the
worker, the reaper or a client) and, in the same unit of work, the step is marked, its successors' executions
are queued or the run ends. The run's row is locked first (`get(..., for_update=True)`), so that the execution's change
joins the transaction, and two steps ending at once on two nodes never both start the step waiting for both."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from controlplane_domain.executions.entity import Execution, ExecutionEvent, ExecutionStatus, RunWith, TargetType
from controlplane_domain.executions.execute import applicable_context, new_queued
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.rendering import RenderedTooLong
from controlplane_domain.webhooks.listeners import DUE
from controlplane_domain.workflows.entity import (
    GONE,
    NewRunEvent,
    RunStatus,
    StepRun,
    StepStatus,
    WorkflowRun,
    numbered_run,
    run_event,
    step_event,
)
from controlplane_domain.workflows.graph import descendants, render
from controlplane_domain.workflows.webhook_events import run_status_changed

S = ExecutionStatus


def run_topic(run_id: str) -> str:
    return f"workflow_run:{run_id}"


class Advance:
    """A run as it changes in one unit of work: the events that tell it, the topics to publish after commit."""

    def __init__(self, run: WorkflowRun) -> None:
        self.run = run
        self.events: list[NewRunEvent] = []
        self.topics: set[str] = {run_topic(run.id)}
        self._saved_status: RunStatus | None = run.status

    def set_step(self, step: StepRun) -> None:
        self.run = self.run.with_step(step)
        self.events.append(step_event(step))

    async def save(self, ports: Ports, uow: UnitOfWork, now: datetime, *, new: bool = False) -> WorkflowRun:
        """Write the run and its events (and `workflow_run.status_changed` when its status changed: webhooks)."""
        run, rows = numbered_run(replace(self.run, updated_at=now), self.events, now)
        if new:
            await uow.workflow_runs.add(run, rows)
        elif rows:
            await uow.workflow_runs.update(run, rows)
        if await run_status_changed(ports, uow, None if new else self._saved_status, run, now):
            self.topics.add(DUE)
        self._saved_status = run.status
        self.run = run
        return run


async def record_step_end(
    ports: Ports, uow: UnitOfWork, before: Execution, after: Execution, rows: Sequence[ExecutionEvent]
) -> tuple[bool, set[str]]:
    """`executions.record` of a step's execution that ends, and the advance of its run, in one unit of work:
    (recorded, the topics to publish once committed). The run is locked before the execution is written."""
    assert after.workflow_run_id is not None
    run = await uow.workflow_runs.get(after.organization_id, after.workflow_run_id, for_update=True)
    if not await uow.executions.record(before, after, rows):
        return False, set()
    if run is None:
        return True, set()
    advance = Advance(run)
    await step_execution_ended(ports, uow, advance, after, after.updated_at)
    await advance.save(ports, uow, after.updated_at)
    return True, advance.topics


async def step_execution_ended(
    ports: Ports, uow: UnitOfWork, advance: Advance, execution: Execution, now: datetime
) -> None:
    """The step of `execution` ends with it (or runs again, when it failed and attempts remain); then the run
    moves on. Nothing changes when the run already ended or the step moved past this execution."""
    run = advance.run
    step = run.step(execution.workflow_step_id or "")
    if run.is_terminal or step is None or step.execution_id != execution.id or step.status is not StepStatus.RUNNING:
        return
    if execution.status is S.COMPLETED:
        advance.set_step(replace(step, status=StepStatus.SUCCEEDED, output=execution.response, finished_at=now))
    elif execution.status is S.CANCELLED:
        advance.set_step(replace(step, status=StepStatus.CANCELLED, error=execution.error, finished_at=now))
    elif step.attempt < run.definition_of(step.id).max_attempts:
        await start_step(ports, uow, advance, step.id, now, attempt=step.attempt + 1)
    else:
        error = execution.error or f"its execution ended {execution.status.value}"
        advance.set_step(replace(step, status=StepStatus.FAILED, error=error, finished_at=now))
    await settle(ports, uow, advance, now)


async def settle(ports: Ports, uow: UnitOfWork, advance: Advance, now: datetime) -> None:
    """Until nothing more changes: the steps after a failed or cancelled one are skipped, the steps whose
    dependencies all succeeded start, and the run ends once every step has ended."""
    while not advance.run.is_terminal:
        run = advance.run
        status = {step.id: step.status for step in run.steps}
        ended_badly = [s for s, st in status.items() if st in (StepStatus.FAILED, StepStatus.CANCELLED)]
        doomed = set().union(*(descendants(run.definition, step_id) for step_id in ended_badly))
        changed = False
        for step in run.steps:
            if step.status is StepStatus.PENDING and step.id in doomed:
                advance.set_step(
                    replace(
                        step, status=StepStatus.SKIPPED, finished_at=now, error="a step it depends on did not succeed"
                    )
                )
                changed = True
        if changed:
            continue
        for definition in run.definition:
            ready = all(status[dependency] is StepStatus.SUCCEEDED for dependency in definition.depends_on)
            if status[definition.id] is StepStatus.PENDING and ready:
                await start_step(ports, uow, advance, definition.id, now, attempt=1)
                changed = True
        if changed:
            continue
        if all(step.is_terminal for step in run.steps):
            finish(advance, now)
        return


def finish(advance: Advance, now: datetime, *, status: RunStatus | None = None, error: str | None = None) -> None:
    """End the run: failed when a step failed, else cancelled when one was, else succeeded (or `status`)."""
    run = advance.run
    if status is None:
        statuses = {step.status for step in run.steps}
        failed = [step.id for step in run.steps if step.status is StepStatus.FAILED]
        if failed:
            status, error = RunStatus.FAILED, "failed steps: " + ", ".join(failed)
        elif StepStatus.CANCELLED in statuses:
            status, error = RunStatus.CANCELLED, "a step was cancelled"
        else:
            status = RunStatus.SUCCEEDED
    advance.run = replace(run, status=status, error=error, finished_at=now)
    advance.events.append(run_event(advance.run))


async def start_step(
    ports: Ports, uow: UnitOfWork, advance: Advance, step_id: str, now: datetime, *, attempt: int
) -> None:
    """Queue the step's execution (attempt `attempt` of the step): its prompt rendered with the run's input and
    the outputs of the steps before it. A step whose queue, agent or team is gone fails at once."""
    run = advance.run
    definition = run.definition_of(step_id)
    step = run.step(step_id)
    assert step is not None
    organization_id = run.organization_id
    queue_id = definition.worker_queue_id or run.worker_queue_id
    missing, run_with = None, None
    if await uow.queues.get(organization_id, queue_id) is None:
        missing = f"worker queue '{queue_id}'"
    elif definition.agent_id is not None:
        run_with = await uow.executions.run_with(organization_id, definition.agent_id)
        missing = f"agent '{definition.agent_id}'" if run_with is None else None
    elif definition.team_id is not None:
        team = await uow.teams.get(organization_id, definition.team_id)
        missing = f"team '{definition.team_id}'" if team is None else None
        run_with = None if team is None else RunWith(target_name=team.name)
    outputs = {each.id: each.output for each in run.steps}
    error = None if missing is None else f"{missing} {GONE}"
    prompt = ""
    if error is None:
        try:
            prompt = render(definition.prompt, run.input, outputs)
        except RenderedTooLong as exc:  # stopped at the limit: nothing more was built
            error = exc.message
    if error is not None:
        advance.set_step(replace(step, status=StepStatus.FAILED, attempt=attempt, finished_at=now, error=error))
        return
    target, target_id = (
        (TargetType.AGENT, definition.agent_id)
        if definition.agent_id is not None
        else (TargetType.TEAM, definition.team_id)
    )  # (exactly one: graph.check_steps)
    first, queued = new_queued(
        ports, organization_id, target, target_id, queue_id, prompt, now, run_with=run_with,
        workflow_run_id=run.id, workflow_step_id=step_id,
    )  # fmt: skip
    context = await applicable_context(ports, uow, queued)
    await uow.executions.record(None, queued, first, context=context)
    started = replace(
        step,
        status=StepStatus.RUNNING,
        execution_id=queued.id,
        attempt=attempt,
        error=None,
        started_at=step.started_at or now,
        # the earliest its execution can time out: were it leased at once (workflows/timeouts.py)
        timeout_at=None if definition.timeout_seconds is None else now + timedelta(seconds=definition.timeout_seconds),
    )
    advance.set_step(started)
    advance.topics.add(f"queue:{queue_id}")
