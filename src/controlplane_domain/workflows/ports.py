"""What the workflows area needs from a store: the workflows, and their runs with each run's event log."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from controlplane_domain.paging import PageRequest
from controlplane_domain.repository import Repository
from controlplane_domain.workflows.entity import RunEvent, RunStatus, Workflow, WorkflowRun


class WorkflowRepository(Repository[Workflow], Protocol):
    async def add(self, workflow: Workflow) -> None:
        """Store a new workflow; Conflict when its name is taken in the organization."""

    async def update(self, workflow: Workflow) -> None:
        """Replace a stored workflow; Conflict when its new name is taken."""


class WorkflowRunRepository(Protocol):
    async def add(self, run: WorkflowRun, events: Sequence[RunEvent]) -> None:
        """Store a new run with its first events."""

    async def get(self, organization_id: str, run_id: str, *, for_update: bool = False) -> WorkflowRun | None:
        """With `for_update`, the run stays locked until the transaction ends: whoever advances a run
        holds it, so that two steps ending at once never both start the step that waits for both."""

    async def update(self, run: WorkflowRun, events: Sequence[RunEvent]) -> None:
        """Replace a stored run (read with `for_update` in this unit of work) and append the events that tell
        the change."""

    async def list_page(
        self, organization_id: str, page: PageRequest, *, workflow_id: str | None, status: RunStatus | None
    ) -> tuple[list[WorkflowRun], int]: ...

    async def newest_page(
        self, organization_id: str, page: PageRequest, statuses: frozenset[RunStatus] | None
    ) -> tuple[list[WorkflowRun], int]:
        """The organization's runs (whose status is in `statuses`, when given), most recent first ((created_at,
        id) descending), and their total."""

    async def events_after(self, organization_id: str, run_id: str, after_seq: int, limit: int) -> list[RunEvent]:
        """The run's events after `after_seq`, in order, at most `limit`."""

    async def timeouts_due(self, now: datetime, limit: int, *, per_organization: int) -> list[WorkflowRun]:
        """Runs of every organization whose `timeout_check_at` is at or before `now`, in turns between
        organizations (`controlplane_domain.fairness.in_turns`: every organization's earliest first, at most
        `per_organization` of one), at most `limit` (the timeout sweep's read; an index on the column)."""

    async def claim_timeout_check(self, run: WorkflowRun) -> bool:
        """Whether this unit of work may check `run`'s timeouts: the stored `timeout_check_at` is still the one
        `run` (as read by `timeouts_due`) has (a compare-and-set that locks the row: a second node's
        claim waits, then finds the value moved and claims nothing)."""
