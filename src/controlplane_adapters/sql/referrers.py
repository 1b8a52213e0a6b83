"""Who names an object, in the SQL store (controlplane_domain/references.py): one query a referring table, only on
delete. Each query finds the rows whose referring column holds the target (equal, or in its JSON text); Python
(`references.NAMES`) then decides on each row found, as in the memory store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.agents.sql import agent_to_domain, agents
from controlplane_adapters.api_keys.sql import API_KEY_ROWS, api_keys
from controlplane_adapters.environments.sql import queue_to_domain, worker_queues
from controlplane_adapters.integrations.sql import CUSTOM_ROWS, custom_integrations
from controlplane_adapters.jobs.sql import JOB_ROWS, jobs
from controlplane_adapters.projects.sql import project_agents, project_teams
from controlplane_adapters.references import LINKS, NAMES, PENDING_PLANS
from controlplane_adapters.skills.sql import environment_skills
from controlplane_adapters.sql.base import SqlConnection
from controlplane_adapters.task_plans.sql import PLAN_ROWS, task_plans
from controlplane_adapters.teams.sql import TEAM_ROWS, teams
from controlplane_adapters.workflows.sql import WORKFLOW_ROWS, workflows
from controlplane_domain.references import REFERRERS, Kind, Referrer, Target


def _holds(column: sa.ColumnElement[Any], value: str) -> sa.ColumnElement[bool]:
    """The column's JSON text holds `value` (a filter: NAMES decides)."""
    return sa.cast(column, sa.Text).contains(value, autoescape=True)


def _environment(table: sa.Table, target: Target) -> sa.ColumnElement[bool]:
    return _holds(table.c.execution_environment, (target.name or "") if target.kind is Kind.SECRET else target.id)


def _agents(target: Target) -> sa.ColumnElement[bool]:
    if target.kind is Kind.TEAM:
        return agents.c.team_id == target.id
    if target.kind is Kind.SKILL:
        return _holds(agents.c.skill_ids, target.id)
    if target.kind is Kind.MODEL:
        return agents.c.model_id.in_([target.id, target.name or target.id])
    return _environment(agents, target)


def _teams(target: Target) -> sa.ColumnElement[bool]:
    if target.kind is Kind.SKILL:
        return _holds(teams.c.skill_ids, target.id)
    if target.kind is Kind.AGENT:
        return _holds(teams.c.configuration, target.id)
    if target.kind is Kind.MODEL:
        return _holds(teams.c.configuration, target.id) | _holds(teams.c.configuration, target.name or target.id)
    return _environment(teams, target)


def _task_plans(target: Target) -> sa.ColumnElement[bool]:
    pending = task_plans.c.status.in_(sorted(status.value for status in PENDING_PLANS))
    if target.kind is Kind.WORKER_QUEUE:
        return pending & (task_plans.c.worker_queue_id == target.id)
    return pending & (_holds(task_plans.c.steps, target.id) | _holds(task_plans.c.agent_ids, target.id))


def _jobs(target: Target) -> sa.ColumnElement[bool]:
    if target.kind is Kind.WORKER_QUEUE:
        return jobs.c.worker_queue_id == target.id
    return (jobs.c.target_kind == target.kind.value) & (jobs.c.target_id == target.id)


def _api_keys(target: Target) -> sa.ColumnElement[bool]:
    column = api_keys.c.queue_ids if target.kind is Kind.WORKER_QUEUE else api_keys.c.environment_ids
    return _holds(column, target.id)


TABLES: dict[str, tuple[sa.Table, Callable[[Any], Any], Callable[[Target], sa.ColumnElement[bool]]]] = {
    "agent": (agents, agent_to_domain, _agents),
    "team": (teams, TEAM_ROWS.to_domain, _teams),
    "job": (jobs, JOB_ROWS.to_domain, _jobs),
    "workflow": (workflows, WORKFLOW_ROWS.to_domain, lambda target: _holds(workflows.c.steps, target.id)),
    "api_key": (api_keys, API_KEY_ROWS.to_domain, _api_keys),
    "worker_queue": (worker_queues, queue_to_domain, lambda target: worker_queues.c.environment_id == target.id),
    "custom_integration": (
        custom_integrations,
        CUSTOM_ROWS.to_domain,
        lambda target: _holds(custom_integrations.c.secret_names, target.name or ""),
    ),
    "task_plan": (task_plans, PLAN_ROWS.to_domain, _task_plans),
}
"""For each referrer type: its table, its row mapping, and the condition that finds its rows naming a target."""
_LINKED = {
    "agent": (project_agents, "project_id", "agent_id"),
    "team": (project_teams, "project_id", "team_id"),
    "environment": (environment_skills, "skill_id", "environment_id"),
}


class SqlReferrers:
    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection

    async def _linked(self, organization_id: str, target: Target, referrer: str, limit: int) -> list[str]:
        table, named, referring = _LINKED[referrer]
        query = (
            sa.select(table.c[referring])
            .where(table.c.organization_id == organization_id, table.c[named] == target.id)
            .order_by(table.c[referring])
            .limit(limit)
        )
        return [row[0] for row in await self.connection.execute(query)]

    async def naming(self, organization_id: str, target: Target, limit: int) -> list[Referrer]:
        found: list[Referrer] = []
        for referrer in REFERRERS[target.kind]:
            if len(found) >= limit:
                break
            if (target.kind, referrer) in LINKS:
                ids = await self._linked(organization_id, target, referrer, limit)
            else:
                table, to_domain, condition = TABLES[referrer]
                query = sa.select(table).where(table.c.organization_id == organization_id, condition(target))
                rows = await self.connection.execute(query.order_by(table.c.id))
                names = NAMES[referrer]
                ids = [row.id for row in rows if names(to_domain(row), target)]
            found.extend(Referrer(referrer, each) for each in ids)
        return found[:limit]
