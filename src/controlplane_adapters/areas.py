"""Every area's adapters, one line an area: its SQL repository, its memory repository and its tables.

Both units of work (`sql/unit_of_work.py`, `memory/store.py`) are `AreaRepositories`: each line here is a
repository of theirs, made on first use in a unit of work and kept for it, and `sql/schema.py` takes every area's
tables from here. A new area adds its line (and its import); nothing else in the adapters' shared modules.

A memory repository is made from the unit of work (`MemoryUnitOfWork`): its tables (`unit.table("agents")`, a
table is the area's own name for a dict of its objects) and, where it reads them, other areas' repositories."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, overload

import sqlalchemy as sa

from controlplane_adapters.agents.memory import MemoryAgentRepository
from controlplane_adapters.agents.sql import SqlAgentRepository, agents
from controlplane_adapters.analytics.memory import MemoryAnalyticsRepository
from controlplane_adapters.analytics.sql import SqlAnalyticsRepository
from controlplane_adapters.api_keys.memory import MemoryApiKeyRepository
from controlplane_adapters.api_keys.sql import SqlApiKeyRepository, api_keys
from controlplane_adapters.audit.memory import MemoryAuditRepository
from controlplane_adapters.audit.sql import SqlAuditRepository, audit_events
from controlplane_adapters.context_graph.memory import MemoryContextGraphRepository
from controlplane_adapters.context_graph.sql import SqlContextGraphRepository
from controlplane_adapters.context_graph.tables import graph_edges, graph_nodes
from controlplane_adapters.contexts.memory import MemoryContextRepository
from controlplane_adapters.contexts.sql import SqlContextRepository, contexts, execution_contexts
from controlplane_adapters.environments.memory import MemoryEnvironmentRepository, MemoryQueueRepository
from controlplane_adapters.environments.sql import (
    SqlEnvironmentRepository,
    SqlQueueRepository,
    environments,
    worker_queues,
)
from controlplane_adapters.executions.memory import MemoryExecutionRepository
from controlplane_adapters.executions.sql import SqlExecutionRepository
from controlplane_adapters.executions.table import execution_events, executions
from controlplane_adapters.idempotency.memory import MemoryIdempotencyRepository
from controlplane_adapters.idempotency.sql import SqlIdempotencyRepository, idempotency_records
from controlplane_adapters.integrations.memory import MemoryCustomIntegrationRepository, MemoryIntegrationRepository
from controlplane_adapters.integrations.sql import (
    SqlCustomIntegrationRepository,
    SqlIntegrationRepository,
    custom_integrations,
    integrations,
)
from controlplane_adapters.jobs.memory import MemoryJobRepository
from controlplane_adapters.jobs.sql import SqlJobRepository, job_runs, jobs
from controlplane_adapters.llm_models.memory import MemoryModelRepository
from controlplane_adapters.llm_models.sql import SqlModelRepository, llm_models
from controlplane_adapters.memory.referrers import MemoryReferrers
from controlplane_adapters.operations.memory import MemoryOperationsRepository
from controlplane_adapters.operations.sql import SqlOperationsRepository
from controlplane_adapters.organizations.memory import MemoryOrganizationRepository
from controlplane_adapters.organizations.sql import SqlOrganizationRepository, organization_settings
from controlplane_adapters.policies.memory import MemoryDecisionRepository, MemoryPolicyRepository
from controlplane_adapters.policies.sql import SqlDecisionRepository, SqlPolicyRepository, policies, policy_decisions
from controlplane_adapters.projects.memory import MemoryProjectRepository
from controlplane_adapters.projects.sql import SqlProjectRepository, project_agents, project_teams, projects
from controlplane_adapters.secrets.memory import MemorySecretRepository
from controlplane_adapters.secrets.sql import SqlSecretRepository, secret_accesses, secrets
from controlplane_adapters.skills.memory import MemorySkillRepository
from controlplane_adapters.skills.sql import SqlSkillRepository, agent_skills, environment_skills, skills, team_skills
from controlplane_adapters.sql.base import SqlConnection
from controlplane_adapters.sql.referrers import SqlReferrers
from controlplane_adapters.storage.memory import MemoryStoredFileRepository
from controlplane_adapters.storage.sql import SqlStoredFileRepository, stored_files
from controlplane_adapters.task_plans.memory import MemoryTaskPlanRepository
from controlplane_adapters.task_plans.sql import SqlTaskPlanRepository, task_plans
from controlplane_adapters.teams.memory import MemoryTeamRepository
from controlplane_adapters.teams.sql import SqlTeamRepository, teams
from controlplane_adapters.templates.memory import MemoryTemplateRepository
from controlplane_adapters.templates.sql import SqlTemplateRepository, templates
from controlplane_adapters.webhooks.memory import MemoryWebhookRepository
from controlplane_adapters.webhooks.sql import SqlWebhookRepository
from controlplane_adapters.webhooks.table import webhook_deliveries, webhooks
from controlplane_adapters.workers.memory import MemoryWorkerRepository
from controlplane_adapters.workers.sql import SqlWorkerRepository, workers
from controlplane_adapters.workflows.memory import MemoryWorkflowRepository, MemoryWorkflowRunRepository
from controlplane_adapters.workflows.sql import (
    SqlWorkflowRepository,
    SqlWorkflowRunRepository,
    workflow_run_events,
    workflow_runs,
    workflows,
)

if TYPE_CHECKING:
    from controlplane_adapters.memory.store import MemoryUnitOfWork
    from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork

S = TypeVar("S")
M = TypeVar("M")


class Area(Generic[S, M]):
    """One area's repositories: made from a SQL connection (`sql`) or a memory unit of work (`memory`), on first
    use in a unit of work, then kept in it (a request touches one or two areas; a unit of work is used once)."""

    def __init__(
        self, sql: Callable[[SqlConnection], S], memory: Callable[[MemoryUnitOfWork], M], *tables: sa.Table
    ) -> None:
        self.sql, self.memory, self.tables = sql, memory, tables
        self.name = ""

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, unit: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(self, unit: SqlUnitOfWork, owner: type[Any]) -> S: ...

    @overload
    def __get__(self, unit: MemoryUnitOfWork, owner: type[Any]) -> M: ...

    def __get__(self, unit: SqlUnitOfWork | MemoryUnitOfWork | None, owner: type[Any]) -> Self | S | M:
        if unit is None:
            return self
        repository = unit.__dict__[self.name] = unit.make(self)
        return repository


class AreaRepositories:
    """Every area's repositories, one line an area (their order is free)."""

    agents = Area(SqlAgentRepository, lambda unit: MemoryAgentRepository(unit.table("agents")), agents)
    teams = Area(SqlTeamRepository, lambda unit: MemoryTeamRepository(unit.table("teams"), unit.agents), teams)
    workers = Area(SqlWorkerRepository, MemoryWorkerRepository.on, workers)
    models = Area(SqlModelRepository, lambda unit: MemoryModelRepository(unit.table("models")), llm_models)
    api_keys = Area(SqlApiKeyRepository, lambda unit: MemoryApiKeyRepository(unit.table("api_keys")), api_keys)
    organizations = Area(
        SqlOrganizationRepository,
        lambda unit: MemoryOrganizationRepository(unit.table("organizations")),
        organization_settings,
    )
    idempotency = Area(
        SqlIdempotencyRepository,
        lambda unit: MemoryIdempotencyRepository(unit.table("idempotency")),
        idempotency_records,
    )
    environments = Area(
        SqlEnvironmentRepository, lambda unit: MemoryEnvironmentRepository(unit.table("environments")), environments
    )
    queues = Area(SqlQueueRepository, lambda unit: MemoryQueueRepository(unit.table("queues")), worker_queues)
    executions = Area(SqlExecutionRepository, MemoryExecutionRepository.on, executions, execution_events)
    projects = Area(SqlProjectRepository, MemoryProjectRepository.on, projects, project_agents, project_teams)
    templates = Area(SqlTemplateRepository, lambda unit: MemoryTemplateRepository(unit.table("templates")), templates)
    skills = Area(SqlSkillRepository, MemorySkillRepository.on, skills, agent_skills, team_skills, environment_skills)
    secrets = Area(
        SqlSecretRepository,
        lambda unit: MemorySecretRepository(unit.table("secrets"), unit.table("secret_accesses")),
        secrets,
        secret_accesses,
    )
    contexts = Area(SqlContextRepository, MemoryContextRepository.on, contexts, execution_contexts)
    integrations = Area(
        SqlIntegrationRepository, lambda unit: MemoryIntegrationRepository(unit.table("integrations")), integrations
    )
    custom_integrations = Area(
        SqlCustomIntegrationRepository,
        lambda unit: MemoryCustomIntegrationRepository(unit.table("custom_integrations")),
        custom_integrations,
    )
    jobs = Area(SqlJobRepository, MemoryJobRepository.on, jobs, job_runs)
    workflows = Area(SqlWorkflowRepository, lambda unit: MemoryWorkflowRepository(unit.table("workflows")), workflows)
    workflow_runs = Area(
        SqlWorkflowRunRepository,
        lambda unit: MemoryWorkflowRunRepository(unit.table("workflow_runs"), unit.table("workflow_run_events")),
        workflow_runs,
        workflow_run_events,
    )
    task_plans = Area(
        SqlTaskPlanRepository, lambda unit: MemoryTaskPlanRepository(unit.table("task_plans")), task_plans
    )
    stored_files = Area(
        SqlStoredFileRepository, lambda unit: MemoryStoredFileRepository(unit.table("stored_files")), stored_files
    )
    policies = Area(SqlPolicyRepository, lambda unit: MemoryPolicyRepository(unit.table("policies")), policies)
    policy_decisions = Area(
        SqlDecisionRepository,
        lambda unit: MemoryDecisionRepository(unit.table("policy_decisions")),
        policy_decisions,
    )
    audit_events = Area(
        SqlAuditRepository, lambda unit: MemoryAuditRepository(unit.table("audit_events")), audit_events
    )
    analytics = Area(SqlAnalyticsRepository, MemoryAnalyticsRepository.on)
    context_graph = Area(
        SqlContextGraphRepository,
        lambda unit: MemoryContextGraphRepository(unit.table("graph_nodes"), unit.table("graph_edges")),
        graph_nodes,
        graph_edges,
    )
    operations = Area(SqlOperationsRepository, MemoryOperationsRepository.on)
    webhooks = Area(
        SqlWebhookRepository,
        lambda unit: MemoryWebhookRepository(unit.table("webhooks"), unit.table("webhook_deliveries")),
        webhooks,
        webhook_deliveries,
    )
    referrers = Area(SqlReferrers, MemoryReferrers.on)


AREAS: tuple[Area[Any, Any], ...] = tuple(value for value in vars(AreaRepositories).values() if isinstance(value, Area))
TABLES: tuple[sa.Table, ...] = tuple(table for area in AREAS for table in area.tables)
"""Every area's tables (`sql/schema.py`)."""
