"""The whole schema: every area's tables, registered on the one `metadata` (columns.py).

Alembic's env.py, the tests and `create_all` read `metadata` from here, where it is complete: an area's table
joins it when its module is imported, and this module imports every one of them (a new area adds its line)."""

from __future__ import annotations

from controlplane_adapters.agents.sql import agents
from controlplane_adapters.api_keys.sql import api_keys
from controlplane_adapters.audit.sql import audit_events
from controlplane_adapters.context_graph.tables import graph_edges, graph_nodes
from controlplane_adapters.contexts.sql import contexts, execution_contexts
from controlplane_adapters.environments.sql import environments, worker_queues
from controlplane_adapters.executions.table import execution_events, executions
from controlplane_adapters.idempotency.sql import idempotency_records
from controlplane_adapters.integrations.sql import custom_integrations, integrations
from controlplane_adapters.jobs.sql import job_runs, jobs
from controlplane_adapters.llm_models.sql import llm_models
from controlplane_adapters.organizations.sql import organization_settings
from controlplane_adapters.policies.sql import policies, policy_decisions
from controlplane_adapters.projects.sql import project_agents, project_teams, projects
from controlplane_adapters.secrets.sql import secret_accesses, secrets
from controlplane_adapters.skills.sql import agent_skills, environment_skills, skills, team_skills
from controlplane_adapters.sql.columns import metadata
from controlplane_adapters.storage.sql import stored_files
from controlplane_adapters.task_plans.sql import task_plans
from controlplane_adapters.teams.sql import teams
from controlplane_adapters.templates.sql import templates
from controlplane_adapters.webhooks.table import webhook_deliveries, webhooks
from controlplane_adapters.workers.sql import workers
from controlplane_adapters.workflows.sql import workflow_run_events, workflow_runs, workflows

TABLES = (
    teams, agents, workers, llm_models, api_keys, organization_settings, idempotency_records, environments,
    worker_queues, executions, execution_events, projects, project_agents, project_teams,
    templates,
    skills, agent_skills, team_skills, environment_skills,
    secrets, secret_accesses,
    worker_queues, executions, execution_events, projects, project_agents, project_teams, contexts,
    execution_contexts,
    integrations, custom_integrations,
    jobs, job_runs,
    workflows, workflow_runs, workflow_run_events,
    task_plans,
    stored_files,
    policies, policy_decisions,
    audit_events,
    graph_nodes, graph_edges,
    webhooks, webhook_deliveries,
)  # fmt: skip

__all__ = ["TABLES", "metadata"]
