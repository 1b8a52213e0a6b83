"""SQLite's reads off the event loop (`LoopConnection.execute_within`): a worker thread, on a reader's connection
of the engine's own, in turns: at most OFF_LOOP_READS of an engine at once and one of an organization."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.engine import READ_ONLY, DeadlineConnection
from controlplane_domain.fairness import OrganizationSlots

OFF_LOOP_READS = 4
"""Statements of `execute_within` (walks, analytics, lists read past the page) of one SQLite engine running in
worker threads at once; one organization runs at most one of them (`off_loop_turn`)."""


@dataclass(frozen=True)
class _OffLoopTurns:
    engine: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(OFF_LOOP_READS))
    organizations: OrganizationSlots = field(default_factory=lambda: OrganizationSlots(1))


_OFF_LOOP_TURNS: weakref.WeakKeyDictionary[sa.Engine, _OffLoopTurns] = weakref.WeakKeyDictionary()


@asynccontextmanager
async def off_loop_turn(engine: sa.Engine, organization_id: str) -> AsyncIterator[None]:
    """A turn of the engine's off-loop reads: the organization's one slot first (its other such reads wait for
    it, holding nothing), then one of the engine's OFF_LOOP_READS. An organization whose reads are long holds
    one worker thread, never all of them: another organization's wait is bounded by the others' reads."""
    turns = _OFF_LOOP_TURNS.get(engine)
    if turns is None:
        turns = _OFF_LOOP_TURNS[engine] = _OffLoopTurns()
    async with turns.organizations.slot(organization_id), turns.engine:
        yield


def read_off_loop(engine: sa.Engine, statement: Any, parameters: Any, seconds: float | None) -> list[Any]:
    """In a worker thread: the statement's rows on a reader's connection of the engine's pool, within `seconds`
    of this thread's CPU time."""
    with engine.connect() as connection:
        connection.execution_options(**{READ_ONLY: True})  # (a reader: no BEGIN IMMEDIATE)
        driver: Any = connection.connection.dbapi_connection
        if not isinstance(driver, DeadlineConnection):
            return list(connection.execute(statement, parameters))
        return driver.within(seconds, lambda: list(connection.execute(statement, parameters)))
