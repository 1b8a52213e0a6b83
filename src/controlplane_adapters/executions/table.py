"""Executions in SQL: the table of executions (with its partial indexes) and the table of their events."""

from __future__ import annotations

import sqlalchemy as sa

from controlplane_adapters.llm_models.sql import Price
from controlplane_adapters.sql.columns import Json, UtcDateTime, events_table, owned_table, timestamps
from controlplane_domain.executions.entity import HELD as HELD_BY_A_WORKER
from controlplane_domain.executions.entity import ExecutionStatus

# executions' statuses as SQL literals, for the partial indexes and the queries that use them
QUEUED = f"'{ExecutionStatus.QUEUED.value}'"
HELD_STATUSES = sorted(status.value for status in HELD_BY_A_WORKER)
HELD = "(" + ", ".join(f"'{held}'" for held in HELD_STATUSES) + ")"


def is_held(status: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
    """`status IN ('running', 'waiting_for_input')`, literally: so a query may use the partial index of held
    executions (a bound value does not prove the index's predicate to SQLite, nor to a generic Postgres plan)."""
    return status.in_([sa.literal_column(f"'{held}'") for held in HELD_STATUSES])


def _partial(name: str, columns: tuple[str, ...], where: str) -> tuple[sa.Index]:
    """An index of the rows that meet `where` (SQL), on Postgres and SQLite alike."""
    return (sa.Index(name, *columns, postgresql_where=sa.text(where), sqlite_where=sa.text(where)),)


executions = owned_table(
    "executions",
    sa.Column("target_type", sa.String(16), nullable=False),
    sa.Column("agent_id", sa.String(64), nullable=True),
    sa.Column("team_id", sa.String(64), nullable=True),
    sa.Column("worker_queue_id", sa.String(64), nullable=False),
    sa.Column("prompt", sa.Text(), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("response", sa.Text(), nullable=True),
    sa.Column("error", sa.Text(), nullable=True),
    sa.Column("usage", Json, nullable=False),
    sa.Column("attempt", sa.Integer(), nullable=False),
    sa.Column("max_attempts", sa.Integer(), nullable=False),
    sa.Column("worker_id", sa.String(255), nullable=True),
    sa.Column("lease_expires_at", UtcDateTime(), nullable=True),
    sa.Column("cancel_requested", sa.Boolean(), nullable=False),
    sa.Column("last_seq", sa.Integer(), nullable=False),
    *timestamps(),
    sa.Column("queued_at", UtcDateTime(), nullable=True),
    sa.Column("started_at", UtcDateTime(), nullable=True),
    sa.Column("finished_at", UtcDateTime(), nullable=True),
    sa.Column("workflow_run_id", sa.String(64), nullable=True),  # a workflow step's execution: its run and step
    sa.Column("workflow_step_id", sa.String(64), nullable=True),
    # the usage's token counts as analytics sums them (migration 0016), written with `usage` by the mapping
    sa.Column("prompt_tokens", sa.BigInteger(), nullable=True),
    sa.Column("completion_tokens", sa.BigInteger(), nullable=True),
    sa.Column("trace_parent", sa.String(128), nullable=True),  # W3C traceparent of its creation (tracing on)
    # what it was run with, kept from its creation (migration 0024; `executions.entity.RunWith`)
    sa.Column("target_name", sa.String(255), nullable=True),
    sa.Column("model", sa.String(255), nullable=True),
    sa.Column("input_cost_per_million", Price(), nullable=True),
    sa.Column("output_cost_per_million", Price(), nullable=True),
    sa.Column("agent_team_id", sa.String(64), nullable=True),
    sa.Index("ix_executions_org_status", "organization_id", "status", "created_at", "id"),
    sa.Index("ix_executions_org_queue", "organization_id", "worker_queue_id", "created_at", "id"),
    # Partial indexes (migration 0004): a change of status rewrites every index whose predicate the new row
    # meets, and most rows are finished. Queries name the status as a literal, so that both databases use them.
    *_partial("ix_executions_org_agent", ("organization_id", "agent_id", "created_at", "id"), "agent_id IS NOT NULL"),
    *_partial("ix_executions_org_team", ("organization_id", "team_id", "created_at", "id"), "team_id IS NOT NULL"),
    *_partial("ix_executions_queued", ("organization_id", "worker_queue_id", "queued_at", "id"), f"status = {QUEUED}"),
    *_partial("ix_executions_held_by", ("organization_id", "worker_id"), f"status IN {HELD}"),
    *_partial("ix_executions_held_until", ("lease_expires_at",), f"status IN {HELD}"),
    stamped=False,
)


execution_events = events_table("execution_events", "execution_id", sa.Column("attempt", sa.Integer(), nullable=False))
