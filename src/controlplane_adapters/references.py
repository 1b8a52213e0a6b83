"""Whether an object names a target (controlplane_domain/references.py): decided here in Python, once, for both
stores. The memory store asks it of every object of the referring type; the SQL store of the rows its one query a
referring table found (a condition on the column that holds the reference, or a substring of its JSON text), so
that a JSON column's text never decides alone.

Two references are links rather than fields: a project's members (`project_agents`, `project_teams`) and an
environment's skills (`environment_skills`); each store reads its link tables itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controlplane_domain.agents.entity import Agent
from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.config import ExecutionEnvironment
from controlplane_domain.environments.entity import WorkerQueue
from controlplane_domain.integrations.entity import CustomIntegration
from controlplane_domain.jobs.entity import Job
from controlplane_domain.references import Kind, Target
from controlplane_domain.secrets.references import referenced_names
from controlplane_domain.task_plans.entity import PlanStatus, TaskPlan
from controlplane_domain.teams.entity import Team
from controlplane_domain.workflows.entity import Workflow

PENDING_PLANS = frozenset({PlanStatus.PLANNING, PlanStatus.READY})
"""The task plans that name what they will run with (controlplane_domain/references.py)."""

LINKS = frozenset({(Kind.PROJECT, "agent"), (Kind.PROJECT, "team"), (Kind.SKILL, "environment")})
"""(kind, referrer type) answered from a link table, not by `names`."""


def _environment_names(environment: ExecutionEnvironment | None, target: Target) -> bool:
    if environment is None:
        return False
    if target.kind is Kind.SECRET:
        return target.name in referenced_names(environment)
    if target.kind is Kind.INTEGRATION:
        return target.id in environment.integration_ids
    if target.kind is Kind.CUSTOM_INTEGRATION:
        return target.id in environment.custom_integration_ids
    return False


def _agent(agent: Agent, target: Target) -> bool:
    if target.kind is Kind.TEAM:
        return agent.team_id == target.id
    if target.kind is Kind.SKILL:
        return target.id in agent.skill_ids
    if target.kind is Kind.MODEL:
        return agent.model_id is not None and agent.model_id in (target.id, target.name)
    return _environment_names(agent.execution_environment, target)


def _team(team: Team, target: Target) -> bool:
    if target.kind is Kind.SKILL:
        return target.id in (team.skill_ids or ())
    reasoning, llm = team.settings.reasoning, team.settings.llm
    if target.kind is Kind.AGENT:
        return reasoning is not None and reasoning.agent_id == target.id
    if target.kind is Kind.MODEL:
        models = (None if llm is None else llm.model, None if reasoning is None else reasoning.model)
        return any(model is not None and model in (target.id, target.name) for model in models)
    return _environment_names(team.execution_environment, target)


def _task_plan(plan: TaskPlan, target: Target) -> bool:
    """A plan planning or ready to run names its queue, its steps' agents and teams and the agents it may use; one
    that ended (started: its workflow names them now; failed; cancelled) is history."""
    if plan.status not in PENDING_PLANS:
        return False
    if target.kind is Kind.WORKER_QUEUE:
        return plan.worker_queue_id == target.id
    if target.kind is Kind.AGENT:
        return target.id in (plan.agent_ids or ()) or any(step.agent_id == target.id for step in plan.steps)
    return target.kind is Kind.TEAM and any(step.team_id == target.id for step in plan.steps)


def _job(job: Job, target: Target) -> bool:
    if target.kind is Kind.WORKER_QUEUE:
        return job.worker_queue_id == target.id
    return job.target.kind.value == target.kind.value and job.target.id == target.id


def _workflow(workflow: Workflow, target: Target) -> bool:
    field = {Kind.AGENT: "agent_id", Kind.TEAM: "team_id", Kind.WORKER_QUEUE: "worker_queue_id"}.get(target.kind)
    return field is not None and any(getattr(step, field) == target.id for step in workflow.steps)


def _api_key(key: ApiKey, target: Target) -> bool:
    if key.revoked_at is not None:
        return False
    if target.kind is Kind.WORKER_QUEUE:
        return target.id in key.queue_ids
    return target.kind is Kind.ENVIRONMENT and target.id in key.environment_ids


def _queue(queue: WorkerQueue, target: Target) -> bool:
    return target.kind is Kind.ENVIRONMENT and queue.environment_id == target.id


def _custom_integration(integration: CustomIntegration, target: Target) -> bool:
    return target.kind is Kind.SECRET and target.name in integration.secret_names


NAMES: dict[str, Callable[[Any, Target], bool]] = {
    "agent": _agent,
    "team": _team,
    "job": _job,
    "workflow": _workflow,
    "api_key": _api_key,
    "worker_queue": _queue,
    "custom_integration": _custom_integration,
    "task_plan": _task_plan,
}
"""For each referrer type: whether one of its objects names the target."""
