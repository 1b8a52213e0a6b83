"""The decision log's buffer: every policy's verdict on every guarded action, written behind in batches.

A guarded action does not wait for its decisions to be written: they wait here and the next flush (the service
flushes every quarter second, at stop, and before this node answers a read of the log) writes them all in one
transaction. So the execute writes only its execution, and a refused action, whose own transaction rolls
back, still has its decisions written. The log records decisions, not outcomes: an allowed action that then
fails for another reason (an unknown queue) keeps its decision."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from controlplane_domain.audit.entity import AuditEvent
from controlplane_domain.policies.entity import Decision

log = logging.getLogger("controlplane.policies")

MAX_PENDING = 100_000
"""Decisions a node keeps while the database is away; beyond, the oldest are dropped (and counted in the log)."""


class DecisionLog:
    """Decisions not written yet, in the order they were taken; plain memory, no I/O."""

    __slots__ = ("_denials", "_pending", "dropped")

    def __init__(self) -> None:
        self._pending: list[Decision] = []
        self._denials: list[AuditEvent] = []
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._pending) + len(self._denials)

    def hold_denial(self, event: AuditEvent) -> None:
        """A denial's audit event, written with the next flush (the denied action's transaction rolled back)."""
        if len(self._denials) < MAX_PENDING:
            self._denials.append(event)

    def drain_denials(self) -> list[AuditEvent]:
        drained, self._denials = self._denials, []
        return drained

    def restore_denials(self, events: list[AuditEvent]) -> None:
        self._denials[:0] = events

    def hold(self, decisions: Iterable[Decision]) -> None:
        self._pending.extend(decisions)
        if len(self._pending) > MAX_PENDING:
            excess = len(self._pending) - MAX_PENDING
            del self._pending[:excess]
            self.dropped += excess
            log.error("the decision log dropped %d decisions (database unavailable?)", excess)

    def drain(self) -> list[Decision]:
        drained, self._pending = self._pending, []
        return drained

    def restore(self, decisions: list[Decision]) -> None:
        """Put back decisions a flush could not write, before those taken since."""
        self._pending[:0] = decisions
        self.hold(())
