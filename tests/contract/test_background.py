"""Background workflows on every store: the jobs' `firings_page` (filtered by what each firing started) and
`get_run`, the workflow runs' `newest_page`, and the merged list over them, scoped to the organization."""

from __future__ import annotations

from controlplane_adapters.clock import ManualClock
from controlplane_domain.background import usecases as background
from controlplane_domain.background.entity import BackgroundStatus, BackgroundType, firing_filter
from controlplane_domain.jobs import usecases as jobs
from controlplane_domain.jobs.entity import Target, TargetKind, Trigger, TriggerType
from controlplane_domain.jobs.firing import trigger_job
from controlplane_domain.paging import PageRequest
from controlplane_domain.workflows import runs as workflow_runs
from controlplane_domain.workflows.entity import RunStatus, StepDefinition
from tests.contract.conftest import UowFactory
from tests.contract.test_jobs import ports_on
from tests.contract.test_workflows import ORG, T0, _setup

ALL = PageRequest(limit=200)


async def test_firings_and_workflow_runs_newest_first_filtered_and_scoped(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    ports = ports_on(uow, clock)
    workflow_id, queue_id = await _setup(ports, (StepDefinition(id="a", agent_id="-", prompt="go"),))
    run = await workflow_runs.start_run(ports, ORG, workflow_id, workflow_runs.StartRun(worker_queue_id=queue_id))
    clock.advance(1)
    command = jobs.CreateJob(
        name="flow-job", trigger=Trigger(TriggerType.MANUAL), target=Target(TargetKind.WORKFLOW, workflow_id),
        prompt="unused", worker_queue_id=queue_id,
    )  # fmt: skip
    job = (await jobs.create_job(ports, ORG, command, principal=None)).job
    fired = await trigger_job(ports, ORG, job.id, None, principal=None)
    assert fired.workflow_run_id is not None
    clock.advance(1)
    await workflow_runs.cancel_run(ports, ORG, run.id)
    async with uow() as work:
        assert await work.jobs.get_run(ORG, fired.id) == fired
        assert await work.jobs.get_run("org-b", fired.id) is None
        assert (await work.jobs.firings_page("org-b", ALL, None)) == ([], 0)
        assert (await work.jobs.firings_page(ORG, ALL, firing_filter(BackgroundStatus.RUNNING))) == ([fired], 1)
        assert (await work.jobs.firings_page(ORG, ALL, firing_filter(BackgroundStatus.CANCELLED))) == ([], 0)
        newest, total = await work.workflow_runs.newest_page(ORG, ALL, None)
        assert ([item.id for item in newest], total) == ([fired.workflow_run_id, run.id], 2)
        cancelled, _ = await work.workflow_runs.newest_page(ORG, ALL, frozenset({RunStatus.CANCELLED}))
        assert [item.id for item in cancelled] == [run.id]
        assert (await work.workflow_runs.newest_page("org-b", ALL, None)) == ([], 0)
    page = await background.list_background_runs(ports, ORG, ALL, background.BackgroundFilter())
    assert page.total == 3
    assert page.items[-1].id == run.id
    assert page.items[-1].status is BackgroundStatus.CANCELLED
    jobs_only = background.BackgroundFilter(type=BackgroundType.JOB_RUN, status=BackgroundStatus.RUNNING)
    assert [item.id for item in (await background.list_background_runs(ports, ORG, ALL, jobs_only)).items] == [fired.id]
