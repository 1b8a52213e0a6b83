"""The executions a process last wrote: newest kept, oldest dropped past the capacity, scoped by organization."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from controlplane_domain.executions.entity import Execution, ExecutionStatus, TargetType
from controlplane_domain.executions.recent import RecentExecutions

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def execution(execution_id: str, org: str = "org-a", seq: int = 1) -> Execution:
    return Execution(id=execution_id, organization_id=org, target_type=TargetType.AGENT, agent_id="a", team_id=None,
                     worker_queue_id="q", prompt="p", status=ExecutionStatus.QUEUED, last_seq=seq, created_at=T0,
                     updated_at=T0)  # fmt: skip


def test_the_newest_write_is_kept_and_the_oldest_dropped() -> None:
    recent = RecentExecutions(capacity=2)
    recent.remember(execution("e1"))
    recent.remember(execution("e2"))
    recent.remember(replace(execution("e1"), last_seq=5))  # e1 is the newest again
    recent.remember(execution("e3"))  # e2 goes
    assert len(recent) == 2
    assert recent.get("org-a", "e2") is None
    found = recent.get("org-a", "e1")
    assert found is not None
    assert found.last_seq == 5
    assert recent.get("org-b", "e1") is None, "another organization's execution is never a guess"
    assert recent.get("org-a", "e3") == execution("e3")
