"""The lease rule is Python's (`executions.entity.lease_order` and `leased`, with `lease_steps.lease_in_steps`);
a store that sends it as one statement (`controlplane_adapters/executions/lease.py` `lease_in_one`, Postgres) is
held to it here: on every store, for queues of executions in any state, a lease takes and writes exactly what the
rule decides, and leaves every other execution as it was."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controlplane_domain.environments.entity import QueueStatus
from controlplane_domain.executions.entity import Execution, ExecutionStatus, LeaseTerms, lease_order, leased
from tests.contract.conftest import UowFactory
from tests.contract.test_execution_records import ENVIRONMENT, events, queue
from tests.contract.test_hot_statements import execution
from tests.contract.test_repositories import T0, agent, worker

S = ExecutionStatus
STATUSES = st.sampled_from([S.QUEUED, S.QUEUED, S.RUNNING, S.COMPLETED, S.CANCELLED])


@st.composite
def executions(draw: st.DrawFn) -> list[tuple[ExecutionStatus, int, int, int, bool]]:
    """(status, seconds queued after T0 (few values: ties are ordered by id), attempt, events, in the other queue)."""
    return draw(
        st.lists(
            st.tuples(STATUSES, st.integers(0, 3), st.integers(0, 2), st.integers(1, 3), st.booleans()),
            max_size=6,
        )
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=executions(), active=st.booleans(), known_worker=st.booleans())
async def test_property_a_lease_takes_and_writes_what_the_rule_decides_on_every_store(
    uow: UowFactory,
    drawn: list[tuple[ExecutionStatus, int, int, int, bool]],
    active: bool,
    known_worker: bool,
) -> None:
    org = f"org-{uuid.uuid4().hex[:12]}"
    mine = agent("a", org=org)
    q, r = f"{org}-q", f"{org}-r"
    queues = {q: replace(queue(q, org), environment_id=f"{org}-env"),
              r: replace(queue(r, org), environment_id=f"{org}-env")}  # fmt: skip
    queues[q] = replace(queues[q], status=QueueStatus.ACTIVE if active else QueueStatus.PAUSED)
    stored: list[Execution] = []
    for n, (status, queued, attempt, seqs, elsewhere) in enumerate(drawn):
        base = execution(f"{org}-x{(n * 7) % 10}{n}", "w0" if status is S.RUNNING else None, status)
        stored.append(replace(base, organization_id=org, agent_id=mine.id, worker_queue_id=r if elsewhere else q,
                              queued_at=T0 + timedelta(seconds=queued), attempt=attempt, last_seq=seqs))  # fmt: skip
    async with uow() as work:
        await work.environments.add(replace(ENVIRONMENT, id=f"{org}-env", organization_id=org))
        await work.agents.add(mine)
        for each in queues.values():
            await work.queues.add(each)
        if known_worker:
            await work.workers.save(worker("w1", org=org))
        for each in stored:
            assert await work.executions.record(None, each, events(each, *range(1, each.last_seq + 1)))
        await work.commit()

    now = T0 + timedelta(minutes=1)
    terms = LeaseTerms("w1", now, now + timedelta(minutes=5))
    async with uow() as work:
        outcome = await work.commit_with(lambda: work.executions.lease_next(org, q, terms))

    waiting = [each for each in stored if each.worker_queue_id == q and each.status is S.QUEUED]
    picked = min(waiting, key=lease_order, default=None) if active else None
    expected = None if picked is None else leased(picked, terms)
    assert outcome.queue == queues[q]
    assert outcome.worker == (worker("w1", org=org) if known_worker else None)
    assert outcome.execution == (None if expected is None else expected[0])
    assert outcome.agent == (None if picked is None else mine)
    async with uow() as work:
        for each in stored:
            now_stored = await work.executions.get(org, each.id)
            log = await work.executions.events_after(org, each.id, 0, 100)
            if picked is not None and each.id == picked.id:
                assert expected is not None
                assert (now_stored, log) == (expected[0], events(each, *range(1, each.last_seq + 1)) + expected[1])
            else:
                assert (now_stored, log) == (each, events(each, *range(1, each.last_seq + 1)))
