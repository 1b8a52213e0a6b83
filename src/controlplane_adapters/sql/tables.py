"""The schema, declared once with SQLAlchemy Core; Alembic migrations must produce exactly this."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect

from controlplane_domain.executions.entity import ExecutionStatus

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

Json = sa.JSON().with_variant(JSONB(), "postgresql")


class UtcDateTime(sa.TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite hands back naive values)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime")
        return value.astimezone(UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any] | None:
        if dialect.name == "sqlite":
            return _sqlite_stored  # one step instead of the decorator's, then SQLAlchemy's %-format of a dict
        return super().bind_processor(dialect)

    def result_processor(self, dialect: Dialect, coltype: Any) -> Callable[[Any], datetime | None] | None:
        if dialect.name == "sqlite":
            return _sqlite_utc  # one step instead of SQLAlchemy's regular expression, then the decorator's
        return super().result_processor(dialect, coltype)


_SQLITE_STORED = "%04d-%02d-%02d %02d:%02d:%02d.%06d"  # SQLAlchemy's DATETIME storage format, by position
_last_stored: tuple[datetime | None, str] = (None, "")  # the last value converted, and its text


def _sqlite_stored(value: datetime | None) -> str | None:
    """An aware datetime in SQLite's stored form, as SQLAlchemy's DATETIME writes it after `process_bind_param`
    ('2026-03-01 12:00:00.123456', UTC, microseconds always; tests/contract/test_sqlite_datetimes.py).

    The same datetime object is usually written several times in a row (a change's `updated_at`, the timestamp
    of its new status and its events' `created_at` are one `now`): the last conversion is kept, by identity (a
    datetime never changes), as one tuple that a reader takes whole."""
    global _last_stored
    if value is None:
        return None
    last = _last_stored
    if last[0] is value:
        return last[1]
    if value.tzinfo is None:
        raise ValueError("naive datetime")
    v = value if value.tzinfo is UTC else value.astimezone(UTC)
    text = _SQLITE_STORED % (v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond)
    _last_stored = (value, text)
    return text


def _sqlite_utc(value: str | None) -> datetime | None:
    """SQLite's stored form ('2026-03-01 12:00:00.123456', always UTC) as an aware datetime (parsing the offset
    costs a fifth of `replace(tzinfo=...)`)."""
    return None if value is None else datetime.fromisoformat(value + "+00:00")


def _id() -> sa.Column[str]:
    return sa.Column("id", sa.String(64), primary_key=True)


def _org() -> sa.Column[str]:
    return sa.Column("organization_id", sa.String(255), nullable=False)


def _stamps() -> tuple[sa.Column[datetime], sa.Column[datetime]]:
    return (
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
    )


teams = sa.Table(
    "teams",
    metadata,
    _id(),
    _org(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("runtime", sa.String(64), nullable=False),
    sa.Column("configuration", Json, nullable=False),
    sa.Column("skill_ids", Json, nullable=True),
    sa.Column("execution_environment", Json, nullable=True),
    *_stamps(),
    sa.UniqueConstraint("organization_id", "name"),
    sa.Index("ix_teams_org_created", "organization_id", "created_at", "id"),
)

agents = sa.Table(
    "agents",
    metadata,
    _id(),
    _org(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("runtime", sa.String(64), nullable=False),
    sa.Column("model_id", sa.String(255), nullable=True),
    sa.Column("system_prompt", sa.Text(), nullable=True),
    sa.Column("team_id", sa.String(64), sa.ForeignKey("teams.id", ondelete="SET NULL"), nullable=True),
    sa.Column("capabilities", Json, nullable=False),
    sa.Column("skill_ids", Json, nullable=False),
    sa.Column("execution_environment", Json, nullable=True),
    sa.Column("configuration", Json, nullable=False),
    *_stamps(),
    sa.UniqueConstraint("organization_id", "name"),
    sa.Index("ix_agents_org_created", "organization_id", "created_at", "id"),
    sa.Index("ix_agents_org_team", "organization_id", "team_id", "created_at", "id"),
)

workers = sa.Table(
    "workers",
    metadata,
    sa.Column("organization_id", sa.String(255), primary_key=True),
    sa.Column("worker_id", sa.String(255), primary_key=True),
    sa.Column("environment_name", sa.String(255), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("tasks_processed", sa.BigInteger(), nullable=False),
    sa.Column("current_task_id", sa.String(255), nullable=True),
    sa.Column("worker_metadata", Json, nullable=False),
    sa.Column("heartbeat_interval_seconds", sa.Integer(), nullable=False),
    sa.Column("registered_at", UtcDateTime(), nullable=False),
    sa.Column("last_heartbeat_at", UtcDateTime(), nullable=False),
    sa.Column("queue_id", sa.String(64), nullable=True),
    sa.Index("ix_workers_org_registered", "organization_id", "registered_at", "worker_id"),
    sa.Index("ix_workers_org_queue_seen", "organization_id", "queue_id", "last_heartbeat_at"),
)

llm_models = sa.Table(
    "llm_models",
    metadata,
    _id(),
    _org(),
    sa.Column("value", sa.String(255), nullable=False),
    sa.Column("label", sa.String(255), nullable=False),
    sa.Column("provider", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    sa.Column("compatible_runtimes", Json, nullable=False),
    *_stamps(),
    sa.UniqueConstraint("organization_id", "value"),
    sa.Index("ix_llm_models_org_created", "organization_id", "created_at", "id"),
    sa.Index("ix_llm_models_org_enabled", "organization_id", "enabled", "created_at", "id"),
)

api_keys = sa.Table(
    "api_keys",
    metadata,
    _id(),
    _org(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("role", sa.String(32), nullable=False),
    sa.Column("secret_hash", sa.String(128), nullable=False),
    sa.Column("created_by", sa.String(255), nullable=False),
    sa.Column("created_at", UtcDateTime(), nullable=False),
    sa.Column("expires_at", UtcDateTime(), nullable=True),
    sa.Column("revoked_at", UtcDateTime(), nullable=True),
    sa.Index("ix_api_keys_org_created", "organization_id", "created_at", "id"),
)

organization_settings = sa.Table(
    "organization_settings",
    metadata,
    sa.Column("organization_id", sa.String(255), primary_key=True),
    sa.Column("tier", sa.String(32), nullable=False),
    sa.Column("rate_limit_per_minute", sa.Integer(), nullable=True),
    sa.Column("worker_rate_limit_per_minute", sa.Integer(), nullable=True),
    sa.Column("updated_at", UtcDateTime(), nullable=True),
)

idempotency_records = sa.Table(
    "idempotency_records",
    metadata,
    sa.Column("organization_id", sa.String(255), primary_key=True),
    sa.Column("key", sa.String(255), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("status_code", sa.Integer(), nullable=True),
    sa.Column("content_type", sa.String(255), nullable=True),
    sa.Column("body", sa.LargeBinary(), nullable=True),
    sa.Column("created_at", UtcDateTime(), nullable=False),
    sa.Column("expires_at", UtcDateTime(), nullable=False),
    sa.Index("ix_idempotency_records_expires", "expires_at"),
)

environments = sa.Table(
    "environments",
    metadata,
    _id(),
    _org(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("variables", Json, nullable=False),
    sa.Column("metadata", Json, nullable=False),
    *_stamps(),
    sa.UniqueConstraint("organization_id", "name"),
    sa.Index("ix_environments_org_created", "organization_id", "created_at", "id"),
)

worker_queues = sa.Table(
    "worker_queues",
    metadata,
    _id(),
    _org(),
    sa.Column("environment_id", sa.String(64), sa.ForeignKey("environments.id"), nullable=False),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("max_workers", sa.Integer(), nullable=True),
    sa.Column("heartbeat_interval_seconds", sa.Integer(), nullable=False),
    *_stamps(),
    sa.UniqueConstraint("organization_id", "environment_id", "name"),
    sa.Index("ix_worker_queues_org_created", "organization_id", "created_at", "id"),
    sa.Index("ix_worker_queues_org_env", "organization_id", "environment_id", "created_at", "id"),
)

# executions' statuses as SQL literals, for the partial indexes and the queries that use them
QUEUED = f"'{ExecutionStatus.QUEUED.value}'"
HELD = f"('{ExecutionStatus.RUNNING.value}', '{ExecutionStatus.WAITING_FOR_INPUT.value}')"


def _partial(name: str, columns: tuple[str, ...], where: str) -> tuple[sa.Index]:
    """An index of the rows that meet `where` (SQL), on Postgres and SQLite alike."""
    return (sa.Index(name, *columns, postgresql_where=sa.text(where), sqlite_where=sa.text(where)),)


executions = sa.Table(
    "executions",
    metadata,
    _id(),
    _org(),
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
    *_stamps(),
    sa.Column("queued_at", UtcDateTime(), nullable=True),
    sa.Column("started_at", UtcDateTime(), nullable=True),
    sa.Column("finished_at", UtcDateTime(), nullable=True),
    sa.Index("ix_executions_org_created", "organization_id", "created_at", "id"),
    sa.Index("ix_executions_org_status", "organization_id", "status", "created_at", "id"),
    sa.Index("ix_executions_org_queue", "organization_id", "worker_queue_id", "created_at", "id"),
    # Partial indexes (migration 0004): a change of status rewrites every index whose predicate the new row
    # meets, and most rows are finished. Queries name the status as a literal, so that both databases use them.
    *_partial("ix_executions_org_agent", ("organization_id", "agent_id", "created_at", "id"), "agent_id IS NOT NULL"),
    *_partial("ix_executions_org_team", ("organization_id", "team_id", "created_at", "id"), "team_id IS NOT NULL"),
    *_partial("ix_executions_queued", ("organization_id", "worker_queue_id", "queued_at", "id"), f"status = {QUEUED}"),
    *_partial("ix_executions_held_by", ("organization_id", "worker_id"), f"status IN {HELD}"),
    *_partial("ix_executions_held_until", ("lease_expires_at",), f"status IN {HELD}"),
)

execution_events = sa.Table(
    "execution_events",
    metadata,
    sa.Column("execution_id", sa.String(64), primary_key=True),
    sa.Column("seq", sa.Integer(), primary_key=True),
    _org(),
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("data", Json, nullable=False),
    sa.Column("attempt", sa.Integer(), nullable=False),
    sa.Column("created_at", UtcDateTime(), nullable=False),
)
