"""Every area of the HTTP app, one line an area, each declared beside its controllers (`area.HttpArea`).

Their order is the controllers' and so the OpenAPI document's. `app.py` mounts `CONTROLLERS`; the authorization
middleware takes `VISIBILITY` (`security.require_role`), which `security.py` cannot import: the controllers import it.
"""

from __future__ import annotations

from litestar import Controller

from controlplane_http.agents.controller import AREA as AGENTS
from controlplane_http.analytics.controller import AREA as ANALYTICS
from controlplane_http.api_docs.controller import AREA as API_DOCS
from controlplane_http.api_keys.controller import AREA as API_KEYS
from controlplane_http.area import HttpArea, visibility
from controlplane_http.audit.controller import AREA as AUDIT
from controlplane_http.context_graph.controller import AREA as CONTEXT_GRAPH
from controlplane_http.contexts.controller import AREA as CONTEXTS
from controlplane_http.dashboard.controller import AREA as DASHBOARD
from controlplane_http.environments.controller import AREA as ENVIRONMENTS
from controlplane_http.executions.lease import AREA as EXECUTIONS
from controlplane_http.health.controller import AREA as HEALTH
from controlplane_http.integrations.controller import AREA as INTEGRATIONS
from controlplane_http.jobs.controller import AREA as JOBS
from controlplane_http.llm_models.controller import AREA as LLM_MODELS
from controlplane_http.operations.controller import AREA as OPERATIONS
from controlplane_http.organizations.controller import AREA as ORGANIZATIONS
from controlplane_http.policies.controller import AREA as POLICIES
from controlplane_http.projects.controller import AREA as PROJECTS
from controlplane_http.runners.controller import AREA as RUNNERS
from controlplane_http.runtimes.controller import AREA as RUNTIMES
from controlplane_http.secrets.controller import AREA as SECRETS
from controlplane_http.security import Probe
from controlplane_http.skills.controller import AREA as SKILLS
from controlplane_http.storage.controller import AREA as STORAGE
from controlplane_http.task_plans.controller import AREA as TASK_PLANS
from controlplane_http.teams.controller import AREA as TEAMS
from controlplane_http.templates.controller import AREA as TEMPLATES
from controlplane_http.temporal_workflows.controller import AREA as TEMPORAL_WORKFLOWS
from controlplane_http.webhooks.controller import AREA as WEBHOOKS
from controlplane_http.workers.controller import AREA as WORKERS
from controlplane_http.workflows.controller import AREA as WORKFLOWS

AREAS: tuple[HttpArea, ...] = (
    HEALTH,
    AGENTS,
    TEAMS,
    WORKERS,
    LLM_MODELS,
    RUNTIMES,
    API_KEYS,
    ORGANIZATIONS,
    ENVIRONMENTS,
    EXECUTIONS,
    PROJECTS,
    TEMPLATES,
    SKILLS,
    SECRETS,
    CONTEXTS,
    RUNNERS,
    INTEGRATIONS,
    JOBS,
    WORKFLOWS,
    ANALYTICS,
    TEMPORAL_WORKFLOWS,
    WEBHOOKS,
    DASHBOARD,
    TASK_PLANS,
    STORAGE,
    POLICIES,
    AUDIT,
    CONTEXT_GRAPH,
    OPERATIONS,
    API_DOCS,
)

CONTROLLERS: tuple[type[Controller], ...] = tuple(controller for area in AREAS for controller in area.controllers)
VISIBILITY: dict[str, Probe] = visibility(AREAS)
"""How to tell whether the object a path parameter names is visible to the caller (NotFound when it is not)."""
