"""The executions' repository: pages with filters, leases, held executions, and changes recorded with their
events (compare-and-set on `last_seq`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from controlplane_adapters.agents.sql import agent_to_domain
from controlplane_adapters.contexts.sql import context_value, execution_context_row, execution_contexts
from controlplane_adapters.environments.sql import SqlQueueRepository, queue_to_domain
from controlplane_adapters.executions.lease import LEASE_TABLES, lease_candidate, lease_in_one
from controlplane_adapters.executions.lease_extras import lease_extras_statement
from controlplane_adapters.executions.mapping import (
    RUN_WITH_FIELDS,
    event_to_domain,
    event_to_row,
    execution_changes,
    execution_to_domain,
    execution_to_row,
)
from controlplane_adapters.executions.statements import (
    add_events_json,
    add_in_one,
    add_outbox_json,
    change_in_one,
    check_events,
    events_after_seq,
    extend_held_leases,
    insert_if_found,
    is_queued,
    run_with_statement,
    update_if_at,
)
from controlplane_adapters.executions.table import execution_events, executions, is_held
from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.coalesced import coalesced, coalescing
from controlplane_adapters.sql.columns import from_json
from controlplane_adapters.sql.statements import insert_row, slices, updatable
from controlplane_adapters.webhooks.sql import SqlWebhookRepository, event_parameters
from controlplane_adapters.workers.sql import (
    held_by_worker,
    held_by_workers,
    worker_key,
    worker_parameters,
    worker_to_domain,
)
from controlplane_domain.agents.entity import Agent
from controlplane_domain.contexts.entity import ResolvedContext
from controlplane_domain.environments.entity import WorkerQueue
from controlplane_domain.executions.entity import (
    TERMINAL,
    Execution,
    ExecutionEvent,
    ExecutionStatus,
    LeaseTerms,
    RunWith,
)
from controlplane_domain.executions.lease_steps import lease_in_steps
from controlplane_domain.executions.ports import ExecutionFilter, Leased, LeaseExtras
from controlplane_domain.paging import PageRequest
from controlplane_domain.webhooks.entity import Event
from controlplane_domain.workers.entity import Worker


class SqlExecutionRepository(SqlRepository[Execution]):
    table = executions
    to_row = staticmethod(execution_to_row)
    to_domain = staticmethod(execution_to_domain)
    unique_field = "id"
    noun = "execution"

    @property
    def _postgres(self) -> bool:
        return self.connection.dialect.name == "postgresql"

    async def list_page(  # type: ignore[override]
        self, organization_id: str, page: PageRequest, where: ExecutionFilter
    ) -> tuple[list[Execution], int]:
        created = self.table.c.created_at
        conditions = [
            *([created >= where.created_from] if where.created_from else []),
            *([created < where.created_to] if where.created_to else []),
        ]
        return await self.list_where(
            organization_id,
            page,
            *conditions,
            status=where.status.value if where.status else None,
            agent_id=where.agent_id,
            team_id=where.team_id,
            worker_queue_id=where.worker_queue_id,
        )

    async def lease_next(self, organization_id: str, queue_id: str, terms: LeaseTerms) -> Leased:
        if not self._postgres:  # SQLite's writer holds the database lock: one read, then the record
            reads = {"organization_id": organization_id, "queue_id": queue_id, "worker_id": terms.worker_id}
            found = (await self.connection.execute(lease_candidate(), reads)).first()
            return await lease_in_steps(*self._lease_row(found), terms, self.record)
        parameters = {"lease_organization_id": organization_id, "lease_queue_id": queue_id,
                      "lease_worker_id": terms.worker_id, "lease_now": terms.now,
                      "lease_until": terms.expires_at}  # fmt: skip
        row = (await self.connection.execute(lease_in_one(), parameters)).first()
        return Leased(*self._lease_row(row))

    def _lease_row(self, row: Any) -> tuple[WorkerQueue | None, Worker | None, Execution | None, Agent | None]:
        """A row of `LEASE_TABLES` (or None: no such queue) as the queue, worker, execution and agent it holds."""
        queue, worker, execution, agent = (None, None, None, None) if row is None else slices(row, LEASE_TABLES)
        return (
            None if queue is None else queue_to_domain(queue),
            None if worker is None else worker_to_domain(worker),
            None if execution is None else self._saw(execution),
            None if agent is None else agent_to_domain(agent),
        )

    async def lease_extras(self, organization_id: str, execution_id: str, environment_id: str) -> LeaseExtras:
        parameters = {"organization_id": organization_id, "execution_id": execution_id,
                      "environment_id": environment_id}  # fmt: skip
        row = (await self.connection.execute(lease_extras_statement(), parameters)).first()
        context = None if row.context is None else from_json(row.context, ResolvedContext)
        return LeaseExtras(context, bool(row.environment_has_skills))

    async def running_for_worker(self, organization_id: str, worker_id: str) -> list[Execution]:
        reader = coalescing(self.connection)
        if reader is not None:  # a Postgres reader (heartbeats): one statement for this turn's workers
            key = (organization_id, worker_id)
            rows = await coalesced(reader, held_by_workers(), key, worker_key, worker_parameters)
            return [execution_to_domain(row) for row in rows]
        parameters = {"organization_id": organization_id, "worker_id": worker_id}
        rows = await self.connection.execute(held_by_worker(), parameters)
        return [execution_to_domain(row) for row in rows]

    async def extend_leases(self, organization_id: str, worker_id: str, until: datetime) -> int:
        parameters = {"where_organization_id": organization_id, "where_worker_id": worker_id, "until": until}
        result = await self.connection.execute(extend_held_leases(), parameters)
        return int(result.rowcount)

    async def expired_leases(self, now: datetime, limit: int) -> list[Execution]:
        t = self.table
        query = (
            sa.select(t)
            .where(is_held(t.c.status), t.c.lease_expires_at < now)
            .order_by(t.c.lease_expires_at, t.c.id)
            .limit(limit)
        )
        if self._postgres:
            query = query.with_for_update(skip_locked=True)
        return [self._saw(row) for row in await self.connection.execute(query)]

    async def count_queued(self, organization_id: str, queue_ids: Sequence[str]) -> dict[str, int]:
        if not queue_ids:
            return {}
        t = self.table
        rows = await self.connection.execute(
            sa.select(t.c.worker_queue_id, sa.func.count())
            .where(
                t.c.organization_id == organization_id,
                t.c.worker_queue_id.in_(list(queue_ids)),
                is_queued(t.c.status),
            )
            .group_by(t.c.worker_queue_id)
        )
        return {str(queue_id): int(count) for queue_id, count in rows}

    async def count_unfinished(self, organization_id: str, queue_id: str) -> int:
        t = self.table
        if self._postgres:  # waits for the executions being written; holds off new ones until the commit
            await self.connection.execute(sa.text(f"LOCK TABLE {t.name} IN SHARE MODE"))
        unfinished = [s.value for s in ExecutionStatus if s not in TERMINAL]
        result = await self.connection.execute(
            sa.select(sa.func.count()).where(
                t.c.organization_id == organization_id, t.c.worker_queue_id == queue_id, t.c.status.in_(unfinished)
            )
        )
        return int(result.scalar_one())

    async def record(
        self,
        before: Execution | None,
        after: Execution,
        events: Sequence[ExecutionEvent],
        *,
        context: ResolvedContext | None = None,
        outbox: Sequence[Event] = (),
    ) -> bool:
        columns: tuple[str, ...] | None = None
        if context is not None and before is not None:
            raise ValueError("a context is stored with a new execution only")
        if before is None:
            row = execution_to_row(after)
        else:  # only what changed is converted and written (a round trip records three changes)
            if (before.organization_id, before.id) != (after.organization_id, after.id):
                raise ValueError("a change records the same execution it was made from")
            row = execution_changes(before, after, updatable(self.table)) or {"last_seq": after.last_seq}
            columns = tuple(row)
            row.update(organization_id=after.organization_id, id=after.id)
        check_events(after, events)
        try:
            if self._postgres:
                recorded = await self._record_in_one(before, row, columns, events, context, outbox)
            else:
                recorded = await self._record_in_steps(before, row, columns, events)
                if recorded and context is not None:
                    await self._add_context(after, context)
                if recorded and outbox:
                    deliveries = SqlWebhookRepository(self.connection)
                    for event in outbox:
                        await deliveries.enqueue(event)
        except IntegrityError as exc:
            raise self._conflict(after, exc) from exc
        if recorded:
            self._seen[after.id] = after
        return recorded

    async def _record_in_one(
        self, before: Execution | None, row: dict[str, Any], columns: tuple[str, ...] | None,
        events: Sequence[ExecutionEvent], context: ResolvedContext | None, outbox: Sequence[Event],
    ) -> bool:  # fmt: skip
        parameters = row if columns is None else self._where_at(before, row, columns)
        add_events_json(parameters, events)
        if context is not None:
            parameters["context"] = context_value(context)
        if outbox:
            add_outbox_json(parameters, [event_parameters(event) for event in outbox])
        statement = change_in_one(columns, context is not None, bool(outbox))
        return (await self.connection.execute(statement, parameters)).first() is not None

    async def _add_context(self, execution: Execution, context: ResolvedContext) -> None:
        row = execution_context_row(execution.organization_id, execution.id, context)
        await self.connection.execute(insert_row(execution_contexts), row)

    async def add_if_found(
        self, execution: Execution, events: Sequence[ExecutionEvent], context: ResolvedContext | None = None
    ) -> tuple[bool, bool, Execution]:
        if execution.agent_id is None:
            raise ValueError("add_if_found adds an agent's execution")
        check_events(execution, events)
        if not self._postgres:  # the insert of what is found, its events; the reads only to say what was not
            run_with = await self.run_with(execution.organization_id, execution.agent_id)  # (BEGIN IMMEDIATE)
            if run_with is None:
                queue = await SqlQueueRepository(self.connection).get(
                    execution.organization_id, execution.worker_queue_id
                )
                return queue is not None, False, execution
            execution = run_with.applied(execution)
            try:
                inserted = await self.connection.execute(insert_if_found(), execution_to_row(execution))
            except IntegrityError as exc:
                raise self._conflict(execution, exc) from exc
            if inserted.rowcount == 1:
                await self.add_events(events)
                if context is not None:
                    await self._add_context(execution, context)
                self._seen[execution.id] = execution
                return True, True, execution
            return False, True, execution  # (the agent was found, in this transaction)
        parameters = execution_to_row(execution)
        add_events_json(parameters, events)
        if context is not None:
            parameters["context"] = context_value(context)
        try:
            row = (await self.connection.execute(add_in_one(context is not None), parameters)).first()
        except IntegrityError as exc:
            raise self._conflict(execution, exc) from exc
        queue_found, agent_found = bool(row[0]), bool(row[1])
        if queue_found and agent_found:
            execution = RunWith(**{name: getattr(row, name) for name in RUN_WITH_FIELDS}).applied(execution)
            self._seen[execution.id] = execution
        return queue_found, agent_found, execution

    async def run_with(self, organization_id: str, agent_id: str) -> RunWith | None:
        parameters = {"organization_id": organization_id, "agent_id": agent_id}
        row = (await self.connection.execute(run_with_statement(), parameters)).first()
        return None if row is None else RunWith(**{name: getattr(row, name) for name in RUN_WITH_FIELDS})

    async def _record_in_steps(
        self, before: Execution | None, row: dict[str, Any], columns: tuple[str, ...] | None,
        events: Sequence[ExecutionEvent],
    ) -> bool:  # fmt: skip
        if columns is None:
            await self.connection.execute(insert_row(self.table), row)
        else:
            result = await self.connection.execute(update_if_at(columns), self._where_at(before, row, columns))
            if result.rowcount != 1:
                return False
        await self.add_events(events)
        return True

    @staticmethod
    def _where_at(before: Execution | None, row: dict[str, Any], columns: tuple[str, ...]) -> dict[str, Any]:
        assert before is not None
        parameters = {name: row[name] for name in columns}
        parameters.update(where_organization_id=row["organization_id"], where_id=row["id"],
                          expected_seq=before.last_seq)  # fmt: skip
        return parameters

    async def add_events(self, events: Sequence[ExecutionEvent]) -> None:
        if events:
            await self.connection.execute(insert_row(execution_events), [event_to_row(e) for e in events])

    async def events_after(
        self, organization_id: str, execution_id: str, after_seq: int, limit: int
    ) -> list[ExecutionEvent]:
        parameters = {"organization_id": organization_id, "execution_id": execution_id, "after": after_seq,
                      "limit": limit}  # fmt: skip
        rows = await self.connection.execute(events_after_seq(), parameters)
        return [event_to_domain(row) for row in rows]
