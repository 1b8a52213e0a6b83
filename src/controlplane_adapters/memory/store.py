"""An in-memory store with serializable transactions: one unit of work at a time, copy-on-enter."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from types import TracebackType
from typing import Any, Self, TypeVar

from controlplane_adapters.agents.memory import MemoryAgentRepository
from controlplane_adapters.analytics.memory import MemoryAnalyticsRepository
from controlplane_adapters.api_keys.memory import MemoryApiKeyRepository
from controlplane_adapters.audit.memory import MemoryAuditRepository
from controlplane_adapters.context_graph.memory import MemoryContextGraphRepository
from controlplane_adapters.contexts.memory import MemoryContextRepository
from controlplane_adapters.environments.memory import MemoryEnvironmentRepository, MemoryQueueRepository
from controlplane_adapters.executions.memory import MemoryExecutionRepository
from controlplane_adapters.idempotency.memory import MemoryIdempotencyRepository
from controlplane_adapters.integrations.memory import MemoryCustomIntegrationRepository, MemoryIntegrationRepository
from controlplane_adapters.jobs.memory import MemoryJobRepository
from controlplane_adapters.llm_models.memory import MemoryModelRepository
from controlplane_adapters.memory.base import MemoryRepository
from controlplane_adapters.memory.referrers import MemoryReferrers
from controlplane_adapters.operations.memory import MemoryOperationsRepository
from controlplane_adapters.organizations.memory import MemoryOrganizationRepository
from controlplane_adapters.policies.memory import MemoryDecisionRepository, MemoryPolicyRepository
from controlplane_adapters.projects.memory import Memberships, MemoryProjectRepository
from controlplane_adapters.secrets.memory import MemorySecretRepository
from controlplane_adapters.skills.memory import Attachments, MemorySkillRepository
from controlplane_adapters.storage.memory import MemoryStoredFileRepository
from controlplane_adapters.task_plans.memory import MemoryTaskPlanRepository
from controlplane_adapters.teams.memory import MemoryTeamRepository
from controlplane_adapters.templates.memory import MemoryTemplateRepository
from controlplane_adapters.webhooks.memory import MemoryWebhookRepository
from controlplane_adapters.workers.memory import MemoryWorkerRepository
from controlplane_adapters.workflows.memory import MemoryWorkflowRepository, MemoryWorkflowRunRepository
from controlplane_domain.agents.entity import Agent
from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.audit.entity import AuditEvent
from controlplane_domain.context_graph.entity import GraphEdge, GraphNode
from controlplane_domain.contexts.entity import OwnedContext, OwnerType, ResolvedContext
from controlplane_domain.environments.entity import Environment, WorkerQueue
from controlplane_domain.executions.entity import Execution, ExecutionEvent
from controlplane_domain.idempotency.entity import IdempotencyRecord
from controlplane_domain.integrations.entity import CustomIntegration, Integration
from controlplane_domain.jobs.entity import Job, JobRun
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.organizations.entity import OrganizationSettings
from controlplane_domain.policies.entity import Decision, Policy
from controlplane_domain.projects.entity import Project
from controlplane_domain.secrets.entity import Secret, SecretAccess
from controlplane_domain.skills.entity import Skill, SkillOwner
from controlplane_domain.storage.entity import StoredFile
from controlplane_domain.task_plans.entity import TaskPlan
from controlplane_domain.teams.entity import Team
from controlplane_domain.templates.entity import Template
from controlplane_domain.webhooks.entity import Delivery, Webhook
from controlplane_domain.workers.entity import Worker
from controlplane_domain.workflows.entity import RunEvent, Workflow, WorkflowRun

T = TypeVar("T")


@dataclass
class MemoryTables:
    """The committed state; entities are frozen, so shallow copies isolate transactions."""

    agents: dict[str, Agent] = field(default_factory=dict)
    teams: dict[str, Team] = field(default_factory=dict)
    workers: dict[tuple[str, str], Worker] = field(default_factory=dict)
    models: dict[str, LlmModel] = field(default_factory=dict)
    api_keys: dict[str, ApiKey] = field(default_factory=dict)
    organizations: dict[str, OrganizationSettings] = field(default_factory=dict)
    idempotency: dict[tuple[str, str], IdempotencyRecord] = field(default_factory=dict)
    environments: dict[str, Environment] = field(default_factory=dict)
    queues: dict[str, WorkerQueue] = field(default_factory=dict)
    executions: dict[str, Execution] = field(default_factory=dict)
    events: dict[str, tuple[ExecutionEvent, ...]] = field(default_factory=dict)
    projects: dict[str, Project] = field(default_factory=dict)
    project_members: Memberships = field(default_factory=dict)
    templates: dict[str, Template] = field(default_factory=dict)
    skills: dict[str, Skill] = field(default_factory=dict)
    skill_attachments: Attachments = field(default_factory=dict)
    secrets: dict[str, Secret] = field(default_factory=dict)
    secret_accesses: dict[str, SecretAccess] = field(default_factory=dict)
    contexts: dict[str, OwnedContext] = field(default_factory=dict)
    execution_contexts: dict[str, ResolvedContext] = field(default_factory=dict)
    integrations: dict[str, Integration] = field(default_factory=dict)
    custom_integrations: dict[str, CustomIntegration] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    job_runs: dict[str, JobRun] = field(default_factory=dict)
    workflows: dict[str, Workflow] = field(default_factory=dict)
    workflow_runs: dict[str, WorkflowRun] = field(default_factory=dict)
    workflow_run_events: dict[str, tuple[RunEvent, ...]] = field(default_factory=dict)
    task_plans: dict[str, TaskPlan] = field(default_factory=dict)
    stored_files: dict[str, StoredFile] = field(default_factory=dict)
    policies: dict[str, Policy] = field(default_factory=dict)
    policy_decisions: dict[str, Decision] = field(default_factory=dict)
    audit_events: dict[str, AuditEvent] = field(default_factory=dict)
    graph_nodes: dict[str, GraphNode] = field(default_factory=dict)
    graph_edges: dict[str, GraphEdge] = field(default_factory=dict)
    webhooks: dict[str, Webhook] = field(default_factory=dict)
    webhook_deliveries: dict[str, Delivery] = field(default_factory=dict)

    def copy(self) -> MemoryTables:
        return MemoryTables(**{name: dict(getattr(self, name)) for name in TABLES})


TABLES = tuple(table.name for table in fields(MemoryTables))


class MemoryStore:
    """Holds the committed tables and the lock that serializes units of work."""

    def __init__(self) -> None:
        self.tables = MemoryTables()
        self.lock = asyncio.Lock()

    def unit_of_work(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self)


class MemoryUnitOfWork:
    """Works on a private copy of the tables; commit publishes it, leaving without commit drops it. An area is a
    table of `MemoryTables`, and here its repository's attribute and the line of `_bind` that makes it."""

    agents: MemoryAgentRepository
    teams: MemoryTeamRepository
    workers: MemoryWorkerRepository
    models: MemoryModelRepository
    api_keys: MemoryApiKeyRepository
    organizations: MemoryOrganizationRepository
    idempotency: MemoryIdempotencyRepository
    environments: MemoryEnvironmentRepository
    queues: MemoryQueueRepository
    executions: MemoryExecutionRepository
    projects: MemoryProjectRepository
    templates: MemoryTemplateRepository
    skills: MemorySkillRepository
    secrets: MemorySecretRepository
    contexts: MemoryContextRepository
    integrations: MemoryIntegrationRepository
    custom_integrations: MemoryCustomIntegrationRepository
    jobs: MemoryJobRepository
    workflows: MemoryWorkflowRepository
    workflow_runs: MemoryWorkflowRunRepository
    task_plans: MemoryTaskPlanRepository
    stored_files: MemoryStoredFileRepository
    policies: MemoryPolicyRepository
    policy_decisions: MemoryDecisionRepository
    audit_events: MemoryAuditRepository
    analytics: MemoryAnalyticsRepository
    context_graph: MemoryContextGraphRepository
    operations: MemoryOperationsRepository
    webhooks: MemoryWebhookRepository
    referrers: MemoryReferrers

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._work: MemoryTables | None = None

    async def __aenter__(self) -> Self:
        await self._store.lock.acquire()
        self._bind(self._store.tables.copy())
        return self

    def _bind(self, work: MemoryTables) -> None:
        self._work = work
        self.agents = MemoryAgentRepository(work.agents)
        self.teams = MemoryTeamRepository(work.teams, self.agents)
        self.workers = MemoryWorkerRepository(work.workers)
        self.models = MemoryModelRepository(work.models)
        self.api_keys = MemoryApiKeyRepository(work.api_keys)
        self.organizations = MemoryOrganizationRepository(work.organizations)
        self.idempotency = MemoryIdempotencyRepository(work.idempotency)
        self.environments = MemoryEnvironmentRepository(work.environments)
        self.queues = MemoryQueueRepository(work.queues)
        self.webhooks = MemoryWebhookRepository(work.webhooks, work.webhook_deliveries)
        self.executions = MemoryExecutionRepository(
            work.executions,
            work.events,
            (self.queues, self.workers, self.agents),
            work.execution_contexts,
            work.skill_attachments,
            work.models,
            self.webhooks,
        )
        self.projects = MemoryProjectRepository(
            work.projects, work.project_members, agents=work.agents, teams=work.teams
        )
        self.templates = MemoryTemplateRepository(work.templates)
        self.skills = MemorySkillRepository(
            work.skills,
            work.skill_attachments,
            {SkillOwner.AGENT: work.agents, SkillOwner.TEAM: work.teams, SkillOwner.ENVIRONMENT: work.environments},
        )
        self.secrets = MemorySecretRepository(work.secrets, work.secret_accesses)
        self.contexts = MemoryContextRepository(
            work.contexts,
            work.execution_contexts,
            owners={
                OwnerType.PROJECT: work.projects,
                OwnerType.ENVIRONMENT: work.environments,
                OwnerType.TEAM: work.teams,
                OwnerType.AGENT: work.agents,
            },
            queues=work.queues,
            members=work.project_members,
            executions=work.executions,
        )
        self.integrations = MemoryIntegrationRepository(work.integrations)
        self.custom_integrations = MemoryCustomIntegrationRepository(work.custom_integrations)
        self.jobs = MemoryJobRepository(work.jobs, work.job_runs, work.executions, work.workflow_runs)
        self.workflows = MemoryWorkflowRepository(work.workflows)
        self.workflow_runs = MemoryWorkflowRunRepository(work.workflow_runs, work.workflow_run_events)
        self.task_plans = MemoryTaskPlanRepository(work.task_plans)
        self.stored_files = MemoryStoredFileRepository(work.stored_files)
        self.policies = MemoryPolicyRepository(work.policies)
        self.policy_decisions = MemoryDecisionRepository(work.policy_decisions)
        self.audit_events = MemoryAuditRepository(work.audit_events)
        self.analytics = MemoryAnalyticsRepository(
            work.executions, work.agents, work.teams, (work.projects, work.project_members)
        )
        self.context_graph = MemoryContextGraphRepository(work.graph_nodes, work.graph_edges)
        self.operations = MemoryOperationsRepository(work.executions, work.workers, work.jobs)
        referring: dict[str, Mapping[str, Any]] = {
            "agent": work.agents,
            "team": work.teams,
            "job": work.jobs,
            "workflow": work.workflows,
            "api_key": work.api_keys,
            "worker_queue": work.queues,
            "environment": work.environments,
            "custom_integration": work.custom_integrations,
            "task_plan": work.task_plans,
        }
        self.referrers = MemoryReferrers(referring, work.project_members, work.skill_attachments)
        for repository in vars(self).values():  # the generic repositories append their audited writes' events
            if isinstance(repository, MemoryRepository):
                repository.audit_log = work.audit_events

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._work = None
        self._store.lock.release()

    async def commit(self) -> None:
        if self._work is None:
            raise RuntimeError("commit outside the unit of work")
        self._store.tables = self._work
        self._bind(self._work.copy())

    async def commit_with(self, write: Callable[[], Awaitable[T]]) -> T:
        answer = await write()
        await self.commit()
        return answer


class MemoryHealthProbe:
    """The in-memory store always answers."""

    async def database_ok(self) -> bool:
        return True
