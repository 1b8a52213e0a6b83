"""The executions' statements, built once: held and queued by literal status (for the partial indexes), the
reads of a worker's held executions and of events, the extension of leases, and (Postgres) a change with its events
in one statement, its events as one JSON array."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from controlplane_adapters.agents.sql import agents
from controlplane_adapters.contexts.sql import stored_context_of
from controlplane_adapters.environments.sql import worker_queues
from controlplane_adapters.executions.table import QUEUED, execution_events, executions, is_held
from controlplane_adapters.llm_models.sql import llm_models
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.statements import update_columns
from controlplane_adapters.webhooks.table import new_uuid, webhook_deliveries, webhooks
from controlplane_domain.executions.entity import Execution, ExecutionEvent
from controlplane_domain.webhooks.entity import EVERY_EVENT, DeliveryStatus


def is_queued(status: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
    """`status = 'queued'` with the status as a literal: so the query may use the partial index of queued
    executions (a bound value does not prove the index's predicate to SQLite, nor to a generic Postgres plan)."""
    return status == sa.literal_column(QUEUED)


@functools.cache
def events_after_seq() -> sa.Select[Any]:
    t = execution_events
    return hot(
        sa.select(t)
        .where(
            t.c.organization_id == sa.bindparam("organization_id"),
            t.c.execution_id == sa.bindparam("execution_id"),
            t.c.seq > sa.bindparam("after"),
        )
        .order_by(t.c.seq)
        .limit(sa.bindparam("limit"))
    )


@functools.cache
def extend_held_leases() -> sa.Update:
    t = executions
    return hot(
        t.update()
        .where(
            t.c.organization_id == sa.bindparam("where_organization_id"),
            t.c.worker_id == sa.bindparam("where_worker_id"),
            is_held(t.c.status),
        )
        .values(lease_expires_at=sa.bindparam("until"))
    )


@functools.lru_cache(maxsize=256)
def update_if_at(columns: tuple[str, ...]) -> sa.Update:
    """UPDATE of the given columns of an execution still at `expected_seq` (compare-and-set), named like
    `update_by_id` (sql/statements.py)."""
    t = executions
    return hot(update_columns(t, columns).where(t.c.last_seq == sa.bindparam("expected_seq")))


# A change's events reach Postgres as one JSON array of records (`add_events_json`), unnested by
# `jsonb_to_recordset`: five typed arrays cost the driver more than the rest of the statement (asyncpg checks each
# element of an array against the abstract collection types, and encodes timestamps one by one).
EVENT_RECORD = (
    ("seq", sa.Integer()), ("type", sa.String()), ("attempt", sa.Integer()), ("data", JSONB()),
    ("created_at", sa.DateTime(timezone=True)),
)  # fmt: skip


@functools.lru_cache(maxsize=256)
def change_in_one(
    columns: tuple[str, ...] | None, with_context: bool = False, with_outbox: bool = False
) -> sa.Select[Any]:
    """Postgres: an execution's change and its events as one statement (data-modifying CTEs), atomic on its own.
    `columns` None inserts the execution (`with_context`: and its context, the `context` parameter); otherwise
    `update_if_at`. The events (`_events_of`) are inserted only if the execution was, and the statement returns
    its id only then; so are, `with_outbox`, the webhook deliveries of the change's webhook events (`outbox_of`)."""
    t = executions
    if columns is None:
        write: Any = t.insert().values({c.name: sa.bindparam(c.name) for c in t.columns})
    else:
        write = update_if_at(columns)
    changed = write.returning(t.c.id, t.c.organization_id).cte("changed")
    statement = sa.select(changed.c.id).add_cte(_events_of(changed))
    if with_context:
        statement = statement.add_cte(stored_context_of(changed))
    if with_outbox:
        statement = statement.add_cte(outbox_of(changed))
    return hot(statement, atomic=True)


OUTBOX_RECORD = (
    ("e_id", sa.String()), ("e_type", sa.String()), ("e_payload", sa.Text()), ("e_now", sa.DateTime(timezone=True)),
    ("e_position", sa.BigInteger()), ("e_organization_id", sa.String()),
)  # fmt: skip


def outbox_of(changed: sa.CTE) -> sa.CTE:
    """The deliveries of a change's webhook events (the `outbox` parameter, a JSON array of the events' records,
    `add_outbox_json`), for each row of `changed`: one a webhook of the event's organization, enabled and
    listening to its type, as the webhooks' own insert (`webhooks/sql.py` `_enqueue`) writes them."""
    w, d = webhooks, webhook_deliveries
    event = (
        sa.func.jsonb_to_recordset(sa.cast(sa.bindparam("outbox", type_=sa.Text()), JSONB))
        .table_valued(*(sa.column(name, kind) for name, kind in OUTBOX_RECORD))
        .render_derived(name="outbox_event", with_types=True)
    )
    listening = sa.or_(
        w.c.events.like(sa.literal("%,") + event.c.e_type + sa.literal(",%")), w.c.events.like(f"%,{EVERY_EVENT},%")
    )
    rows = (
        sa.select(
            new_uuid(),
            w.c.organization_id,
            w.c.id,
            event.c.e_id,
            event.c.e_type,
            event.c.e_payload,
            sa.literal(DeliveryStatus.PENDING.value, sa.String()),
            sa.literal(0, sa.Integer()),
            event.c.e_now,
            event.c.e_position,
            event.c.e_now,
            event.c.e_now,
        )
        .select_from(changed.join(event, sa.true()).join(w, w.c.organization_id == event.c.e_organization_id))
        .where(w.c.enabled.is_(True), listening)
    )
    names = ("id", "organization_id", "webhook_id", "message_id", "event_type", "payload", "status", "attempts",
             "next_attempt_at", "position", "created_at", "updated_at")  # fmt: skip
    return d.insert().from_select(names, rows).cte("delivered")


def add_outbox_json(parameters: dict[str, Any], outbox: Sequence[dict[str, Any]]) -> None:
    """The `outbox` parameter of `outbox_of`: the events' records (`webhooks/sql.py` `event_parameters`) as one
    JSON array."""
    parameters["outbox"] = _EVENTS_JSON.encode(
        [{name: each[name] for name, _ in OUTBOX_RECORD} for each in outbox]
    ).decode()


def _events_of(changed: sa.CTE) -> sa.CTE:
    """The insert of a change's events (the `events` parameter, a JSON array of records) for each row of
    `changed`."""
    records = (
        sa.func.jsonb_to_recordset(sa.cast(sa.bindparam("events", type_=sa.Text()), JSONB))
        .table_valued(*(sa.column(name, kind) for name, kind in EVENT_RECORD))
        .render_derived(name="event", with_types=True)
    )
    rows = sa.select(changed.c.id, changed.c.organization_id, *records.c).select_from(changed.join(records, sa.true()))
    names = ["execution_id", "organization_id", *(name for name, _ in EVENT_RECORD)]
    return execution_events.insert().from_select(names, rows).cte("inserted")


def _found(table: sa.Table, key: str) -> sa.Exists:
    """A row of `table` whose organization and id are the new execution's `organization_id` and `key`."""
    return sa.exists().where(
        table.c.organization_id == sa.bindparam("organization_id", type_=table.c.organization_id.type),
        table.c.id == sa.bindparam(key, type_=sa.String()),
    )


@functools.cache
def insert_if_found() -> sa.Insert:
    """SQLite: the insert of an agent's new execution, only if its worker queue and its agent are found."""
    t = executions
    values = sa.select(*(sa.bindparam(c.name, type_=c.type) for c in t.columns)).where(
        _found(worker_queues, "worker_queue_id"), _found(agents, "agent_id")
    )
    return hot(t.insert().from_select([c.name for c in t.columns], values))


def run_with_of(organization_id: Any, agent_id: Any) -> sa.Select[Any]:
    """What a new execution of an agent runs with (`executions.entity.agent_run_with`, the same rule, which
    `tests/contract/test_execution_history.py` holds every store to): one row when the agent exists, none
    otherwise, with the columns of `RUN_WITH_FIELDS`."""
    a = agents
    by_id, by_value = llm_models.alias("run_model_by_id"), llm_models.alias("run_model_by_value")
    named_by_id = sa.and_(by_id.c.organization_id == a.c.organization_id, by_id.c.id == a.c.model_id)
    named_by_value = sa.and_(by_value.c.organization_id == a.c.organization_id, by_value.c.value == a.c.model_id)

    def price(name: str) -> sa.ColumnElement[Any]:  # the model named by id, else by value
        return sa.case((by_id.c.id.isnot(None), by_id.c[name]), else_=by_value.c[name]).label(name)

    return (
        sa.select(
            a.c.name.label("target_name"),
            sa.func.coalesce(by_id.c.value, by_value.c.value, a.c.model_id).label("model"),
            price("input_cost_per_million"),
            price("output_cost_per_million"),
            a.c.team_id.label("agent_team_id"),
        )
        .select_from(a.outerjoin(by_id, named_by_id).outerjoin(by_value, named_by_value))
        .where(a.c.organization_id == organization_id, a.c.id == agent_id)
    )


@functools.cache
def run_with_statement() -> sa.Select[Any]:
    return hot(run_with_of(sa.bindparam("organization_id"), sa.bindparam("agent_id")))


@functools.cache
def add_in_one(with_context: bool = False) -> sa.Select[Any]:
    """Postgres: `change_in_one(None, with_context)` only if the execution's worker queue and agent exist in its
    organization, with what the agent runs with (`run_with_of`), answering whether each does and what the
    execution was added with (one statement: the reads an execute needs and its write)."""
    t = executions
    queue, agent = _found(worker_queues, "worker_queue_id"), _found(agents, "agent_id")
    found = sa.select(queue.label("queue"), agent.label("agent"))
    found_cte = found.cte("found")
    run = run_with_of(
        sa.bindparam("organization_id", type_=t.c.organization_id.type), sa.bindparam("agent_id", type_=sa.String())
    ).subquery("run_with")
    values = (
        sa.select(*(run.c[c.name] if c.name in run.c else sa.bindparam(c.name, type_=c.type) for c in t.columns))
        .select_from(found_cte.join(run, sa.true()))
        .where(found_cte.c.queue)
    )
    write = t.insert().from_select([c.name for c in t.columns], values)
    ran_with = [t.c[name] for name in run.c.keys()]  # noqa: SIM118 (a subquery's columns are not a dict)
    changed = write.returning(t.c.id, t.c.organization_id, *ran_with).cte("changed")
    statement = (
        sa.select(found_cte.c.queue, found_cte.c.agent, *(changed.c[c.name] for c in ran_with))
        .select_from(found_cte.outerjoin(changed, sa.true()))
        .add_cte(_events_of(changed))
    )
    if with_context:
        statement = statement.add_cte(stored_context_of(changed))
    return hot(statement, atomic=True)


def check_events(execution: Execution, events: Sequence[ExecutionEvent]) -> None:
    if any((e.execution_id, e.organization_id) != (execution.id, execution.organization_id) for e in events):
        raise ValueError("the events of a change are the changed execution's")


def add_events_json(parameters: dict[str, Any], events: Sequence[ExecutionEvent]) -> None:
    """The `events` parameter of `_events_of`: the events' columns as one JSON array (timestamps in RFC 3339)."""
    records = [
        {"seq": e.seq, "type": e.type.value, "attempt": e.attempt, "data": e.data, "created_at": e.created_at}
        for e in events
    ]
    parameters["events"] = _EVENTS_JSON.encode(records).decode()


_EVENTS_JSON = msgspec.json.Encoder()
