"""Explicit mapping between rows and domain objects (the ORM never reaches the domain)."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from controlplane_domain.agents.entity import Agent, AgentStatus
from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.config import ExecutionEnvironment, TeamSettings
from controlplane_domain.environments.entity import Environment, EnvironmentStatus, QueueStatus, WorkerQueue
from controlplane_domain.executions.entity import EventType, Execution, ExecutionEvent, ExecutionStatus, TargetType
from controlplane_domain.idempotency.entity import IdempotencyRecord, RecordState
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.organizations.entity import OrganizationSettings, Tier
from controlplane_domain.principal import Role
from controlplane_domain.teams.entity import Team, TeamStatus
from controlplane_domain.workers.entity import Worker, WorkerStatus

T = TypeVar("T")


def to_json(value: Any) -> Any:
    """Dataclasses, enums and containers as JSON-ready builtins."""
    return msgspec.to_builtins(value)


def from_json(value: Any, kind: type[T]) -> T:
    return msgspec.convert(value, kind)


def _environment(value: Any) -> ExecutionEnvironment | None:
    return None if value is None else from_json(value, ExecutionEnvironment)


def agent_to_row(agent: Agent) -> dict[str, Any]:
    return {
        "id": agent.id,
        "organization_id": agent.organization_id,
        "name": agent.name,
        "description": agent.description,
        "status": agent.status.value,
        "runtime": agent.runtime,
        "model_id": agent.model_id,
        "system_prompt": agent.system_prompt,
        "team_id": agent.team_id,
        "capabilities": list(agent.capabilities),
        "skill_ids": list(agent.skill_ids),
        "execution_environment": to_json(agent.execution_environment),
        "configuration": to_json(agent.configuration),
        "created_at": agent.created_at,
        "updated_at": agent.updated_at,
    }


def agent_to_domain(row: Any) -> Agent:
    return Agent(
        id=row.id,
        organization_id=row.organization_id,
        name=row.name,
        description=row.description,
        status=AgentStatus(row.status),
        runtime=row.runtime,
        model_id=row.model_id,
        system_prompt=row.system_prompt,
        team_id=row.team_id,
        capabilities=list(row.capabilities),
        skill_ids=list(row.skill_ids),
        execution_environment=_environment(row.execution_environment),
        configuration=dict(row.configuration),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def team_to_row(team: Team) -> dict[str, Any]:
    return {
        "id": team.id,
        "organization_id": team.organization_id,
        "name": team.name,
        "description": team.description,
        "status": team.status.value,
        "runtime": team.runtime,
        "configuration": to_json(team.settings),
        "skill_ids": None if team.skill_ids is None else list(team.skill_ids),
        "execution_environment": to_json(team.execution_environment),
        "created_at": team.created_at,
        "updated_at": team.updated_at,
    }


def team_to_domain(row: Any) -> Team:
    return Team(
        id=row.id,
        organization_id=row.organization_id,
        name=row.name,
        description=row.description,
        status=TeamStatus(row.status),
        runtime=row.runtime,
        settings=from_json(row.configuration, TeamSettings),
        skill_ids=None if row.skill_ids is None else list(row.skill_ids),
        execution_environment=_environment(row.execution_environment),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def worker_to_row(worker: Worker) -> dict[str, Any]:
    return {
        "organization_id": worker.organization_id,
        "worker_id": worker.worker_id,
        "environment_name": worker.environment_name,
        "status": worker.status.value,
        "tasks_processed": worker.tasks_processed,
        "current_task_id": worker.current_task_id,
        "worker_metadata": to_json(worker.worker_metadata),
        "heartbeat_interval_seconds": worker.heartbeat_interval_seconds,
        "registered_at": worker.registered_at,
        "last_heartbeat_at": worker.last_heartbeat_at,
        "queue_id": worker.queue_id,
    }


def worker_to_domain(row: Any) -> Worker:
    return Worker(
        worker_id=row.worker_id,
        organization_id=row.organization_id,
        environment_name=row.environment_name,
        status=WorkerStatus(row.status),
        tasks_processed=row.tasks_processed,
        current_task_id=row.current_task_id,
        worker_metadata=dict(row.worker_metadata),
        heartbeat_interval_seconds=row.heartbeat_interval_seconds,
        registered_at=row.registered_at,
        last_heartbeat_at=row.last_heartbeat_at,
        queue_id=row.queue_id,
    )


def model_to_row(model: LlmModel) -> dict[str, Any]:
    return {
        "id": model.id,
        "organization_id": model.organization_id,
        "value": model.value,
        "label": model.label,
        "provider": model.provider,
        "description": model.description,
        "enabled": model.enabled,
        "compatible_runtimes": list(model.compatible_runtimes),
        "created_at": model.created_at,
        "updated_at": model.updated_at,
    }


def model_to_domain(row: Any) -> LlmModel:
    return LlmModel(
        id=row.id,
        organization_id=row.organization_id,
        value=row.value,
        label=row.label,
        provider=row.provider,
        description=row.description,
        enabled=row.enabled,
        compatible_runtimes=list(row.compatible_runtimes),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def api_key_to_row(key: ApiKey) -> dict[str, Any]:
    return {
        "id": key.id,
        "organization_id": key.organization_id,
        "name": key.name,
        "role": key.role.value,
        "secret_hash": key.secret_hash,
        "created_by": key.created_by,
        "created_at": key.created_at,
        "expires_at": key.expires_at,
        "revoked_at": key.revoked_at,
    }


def api_key_to_domain(row: Any) -> ApiKey:
    return ApiKey(
        id=row.id,
        organization_id=row.organization_id,
        name=row.name,
        role=Role(row.role),
        secret_hash=row.secret_hash,
        created_by=row.created_by,
        created_at=row.created_at,
        expires_at=row.expires_at,
        revoked_at=row.revoked_at,
    )


def settings_to_row(settings: OrganizationSettings) -> dict[str, Any]:
    return {
        "organization_id": settings.organization_id,
        "tier": settings.tier.value,
        "rate_limit_per_minute": settings.rate_limit_per_minute,
        "worker_rate_limit_per_minute": settings.worker_rate_limit_per_minute,
        "updated_at": settings.updated_at,
    }


def settings_to_domain(row: Any) -> OrganizationSettings:
    return OrganizationSettings(
        organization_id=row.organization_id,
        tier=Tier(row.tier),
        rate_limit_per_minute=row.rate_limit_per_minute,
        worker_rate_limit_per_minute=row.worker_rate_limit_per_minute,
        updated_at=row.updated_at,
    )


def record_to_row(record: IdempotencyRecord) -> dict[str, Any]:
    return {
        "organization_id": record.organization_id,
        "key": record.key,
        "fingerprint": record.fingerprint,
        "state": record.state.value,
        "status_code": record.status_code,
        "content_type": record.content_type,
        "body": record.body,
        "created_at": record.created_at,
        "expires_at": record.expires_at,
    }


def record_to_domain(row: Any) -> IdempotencyRecord:
    return IdempotencyRecord(
        organization_id=row.organization_id,
        key=row.key,
        fingerprint=row.fingerprint,
        state=RecordState(row.state),
        status_code=row.status_code,
        content_type=row.content_type,
        body=None if row.body is None else bytes(row.body),
        created_at=row.created_at,
        expires_at=row.expires_at,
    )


def environment_to_row(environment: Environment) -> dict[str, Any]:
    return {
        "id": environment.id,
        "organization_id": environment.organization_id,
        "name": environment.name,
        "description": environment.description,
        "status": environment.status.value,
        "variables": dict(environment.variables),
        "metadata": to_json(environment.metadata),
        "created_at": environment.created_at,
        "updated_at": environment.updated_at,
    }


def environment_to_domain(row: Any) -> Environment:
    return Environment(
        id=row.id,
        organization_id=row.organization_id,
        name=row.name,
        description=row.description,
        status=EnvironmentStatus(row.status),
        variables=dict(row.variables),
        metadata=dict(row.metadata),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def queue_to_row(queue: WorkerQueue) -> dict[str, Any]:
    return {
        "id": queue.id,
        "organization_id": queue.organization_id,
        "environment_id": queue.environment_id,
        "name": queue.name,
        "description": queue.description,
        "status": queue.status.value,
        "max_workers": queue.max_workers,
        "heartbeat_interval_seconds": queue.heartbeat_interval_seconds,
        "created_at": queue.created_at,
        "updated_at": queue.updated_at,
    }


def queue_to_domain(row: Any) -> WorkerQueue:
    return WorkerQueue(
        id=row.id,
        organization_id=row.organization_id,
        environment_id=row.environment_id,
        name=row.name,
        description=row.description,
        status=QueueStatus(row.status),
        max_workers=row.max_workers,
        heartbeat_interval_seconds=row.heartbeat_interval_seconds,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


EXECUTION_FIELDS = (
    "id", "organization_id", "agent_id", "team_id", "worker_queue_id", "prompt", "response", "error", "attempt",
    "max_attempts", "worker_id", "lease_expires_at", "cancel_requested", "last_seq", "created_at", "updated_at",
    "queued_at", "started_at", "finished_at",
)  # fmt: skip


def execution_to_row(execution: Execution) -> dict[str, Any]:
    row = {name: getattr(execution, name) for name in EXECUTION_FIELDS}
    row.update(target_type=execution.target_type.value, status=execution.status.value, usage=to_json(execution.usage))
    return row


def execution_changes(before: Execution, after: Execution, columns: tuple[str, ...]) -> dict[str, Any]:
    """Of the given columns, those whose value differs between two states of an execution, with the value
    `execution_to_row(after)` gives them (only the changed values are converted)."""
    read = _reader(columns)  # every column's value in one call (two `getattr` a column cost more than the rest)
    changes = {}
    for name, value, old in zip(columns, read(after), read(before), strict=True):
        if value != old:
            changes[name] = value.value if name in _ENUM_COLUMNS else to_json(value) if name == "usage" else value
    return changes


@functools.cache
def _reader(columns: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if len(columns) == 1:  # attrgetter of one name gives the value itself, not a tuple of one
        name = columns[0]
        return lambda execution: (getattr(execution, name),)
    read: Callable[[Any], tuple[Any, ...]] = operator.attrgetter(*columns)
    return read


_ENUM_COLUMNS = frozenset({"target_type", "status"})


def execution_to_domain(row: Any) -> Execution:
    return Execution(
        **{name: getattr(row, name) for name in EXECUTION_FIELDS},
        target_type=TargetType(row.target_type),
        status=ExecutionStatus(row.status),
        usage=dict(row.usage),
    )


def event_to_row(event: ExecutionEvent) -> dict[str, Any]:
    return {
        "execution_id": event.execution_id,
        "seq": event.seq,
        "organization_id": event.organization_id,
        "type": event.type.value,
        "data": to_json(event.data),
        "attempt": event.attempt,
        "created_at": event.created_at,
    }


def event_to_domain(row: Any) -> ExecutionEvent:
    return ExecutionEvent(
        execution_id=row.execution_id,
        organization_id=row.organization_id,
        seq=row.seq,
        type=EventType(row.type),
        data=dict(row.data),
        attempt=row.attempt,
        created_at=row.created_at,
    )
