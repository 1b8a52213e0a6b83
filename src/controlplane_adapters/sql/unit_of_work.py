"""The SQL unit of work: one connection, one transaction, and each area's repository on it."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Generic, Self, TypeVar, overload

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.agents.sql import SqlAgentRepository
from controlplane_adapters.analytics.sql import SqlAnalyticsRepository
from controlplane_adapters.api_keys.sql import SqlApiKeyRepository
from controlplane_adapters.audit.sql import SqlAuditRepository
from controlplane_adapters.context_graph.sql import SqlContextGraphRepository
from controlplane_adapters.contexts.sql import SqlContextRepository
from controlplane_adapters.environments.sql import SqlEnvironmentRepository, SqlQueueRepository
from controlplane_adapters.executions.sql import SqlExecutionRepository
from controlplane_adapters.idempotency.sql import SqlIdempotencyRepository
from controlplane_adapters.integrations.sql import SqlCustomIntegrationRepository, SqlIntegrationRepository
from controlplane_adapters.jobs.sql import SqlJobRepository
from controlplane_adapters.llm_models.sql import SqlModelRepository
from controlplane_adapters.operations.sql import SqlOperationsRepository
from controlplane_adapters.organizations.sql import SqlOrganizationRepository
from controlplane_adapters.policies.sql import SqlDecisionRepository, SqlPolicyRepository
from controlplane_adapters.projects.sql import SqlProjectRepository
from controlplane_adapters.secrets.sql import SqlSecretRepository
from controlplane_adapters.skills.sql import SqlSkillRepository
from controlplane_adapters.sql.base import SqlConnection
from controlplane_adapters.sql.connection import AsyncEngineConnection
from controlplane_adapters.sql.errors import translate_driver_error
from controlplane_adapters.sql.loop_connection import LoopConnection
from controlplane_adapters.sql.referrers import SqlReferrers
from controlplane_adapters.storage.sql import SqlStoredFileRepository
from controlplane_adapters.task_plans.sql import SqlTaskPlanRepository
from controlplane_adapters.teams.sql import SqlTeamRepository
from controlplane_adapters.templates.sql import SqlTemplateRepository
from controlplane_adapters.webhooks.sql import SqlWebhookRepository
from controlplane_adapters.workers.sql import SqlWorkerRepository
from controlplane_adapters.workflows.sql import SqlWorkflowRepository, SqlWorkflowRunRepository
from controlplane_domain.errors import DomainError

log = logging.getLogger(__name__)

R = TypeVar("R")
T = TypeVar("T")


class _Repository(Generic[R]):
    """A unit of work's repository of one area, made on its connection on first use and kept (a request touches
    one or two of the ten; a unit of work is used once). As `functools.cached_property`, without its lock."""

    def __init__(self, make: Callable[[SqlConnection], R]) -> None:
        self._make = make
        self._name = ""

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name

    @overload
    def __get__(self, unit: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(self, unit: SqlUnitOfWork, owner: type[Any]) -> R: ...

    def __get__(self, unit: SqlUnitOfWork | None, owner: type[Any]) -> Self | R:
        if unit is None:
            return self
        repository = unit.__dict__[self._name] = self._make(unit._open())
        return repository


class SqlUnitOfWork:
    """One connection, one transaction; driver errors leave as domain errors, chained to the cause."""

    def __init__(self, engine: AsyncEngine | sa.Engine, *, read_only: bool = False) -> None:
        self._engine = engine
        self._read_only = read_only
        self._connection: AsyncEngineConnection | LoopConnection | None = None

    async def __aenter__(self) -> Self:
        # Readers take no write lock (SQLite: no BEGIN at all; Postgres: hot reads outside a transaction). Both
        # take their connection with their first statement (a failure to get one is Unavailable there).
        if isinstance(self._engine, sa.Engine):
            self._connection = LoopConnection(self._engine, self._read_only)
        else:
            self._connection = AsyncEngineConnection(self._engine, self._read_only)
        return self

    agents = _Repository(SqlAgentRepository)
    teams = _Repository(SqlTeamRepository)
    workers = _Repository(SqlWorkerRepository)
    models = _Repository(SqlModelRepository)
    api_keys = _Repository(SqlApiKeyRepository)
    organizations = _Repository(SqlOrganizationRepository)
    idempotency = _Repository(SqlIdempotencyRepository)
    environments = _Repository(SqlEnvironmentRepository)
    queues = _Repository(SqlQueueRepository)
    executions = _Repository(SqlExecutionRepository)
    projects = _Repository(SqlProjectRepository)
    templates = _Repository(SqlTemplateRepository)
    skills = _Repository(SqlSkillRepository)
    secrets = _Repository(SqlSecretRepository)
    contexts = _Repository(SqlContextRepository)
    integrations = _Repository(SqlIntegrationRepository)
    custom_integrations = _Repository(SqlCustomIntegrationRepository)
    jobs = _Repository(SqlJobRepository)
    workflows = _Repository(SqlWorkflowRepository)
    workflow_runs = _Repository(SqlWorkflowRunRepository)
    task_plans = _Repository(SqlTaskPlanRepository)
    stored_files = _Repository(SqlStoredFileRepository)
    policies = _Repository(SqlPolicyRepository)
    policy_decisions = _Repository(SqlDecisionRepository)
    audit_events = _Repository(SqlAuditRepository)
    analytics = _Repository(SqlAnalyticsRepository)
    context_graph = _Repository(SqlContextGraphRepository)
    operations = _Repository(SqlOperationsRepository)
    webhooks = _Repository(SqlWebhookRepository)
    referrers = _Repository(SqlReferrers)

    def _open(self) -> AsyncEngineConnection | LoopConnection:
        if self._connection is None:
            raise RuntimeError("repositories are used inside the unit of work's block")
        return self._connection

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                await connection.rollback()
                await connection.close()
            except (OSError, DBAPIError):
                log.warning("closing a database connection failed", exc_info=True)
        if exc is not None and not isinstance(exc, DomainError):
            translated = translate_driver_error(exc)
            if translated is not None:
                raise translated from exc

    async def commit(self) -> None:
        if self._connection is None:
            raise RuntimeError("commit outside the unit of work")
        await self._connection.commit()

    async def commit_with(self, write: Callable[[], Awaitable[T]]) -> T:
        """`write`, then the commit; its statement marked atomic (`hot`) that finds no transaction open is sent as a
        transaction of its own (the connection's `committing`), else it joins the transaction, which then commits."""
        connection = self._open()
        connection.committing = True
        try:
            answer = await write()
        finally:
            connection.committing = False
        await connection.commit()
        return answer
