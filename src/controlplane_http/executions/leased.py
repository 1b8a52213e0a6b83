"""A lease's `resolved`: what its worker needs, resolved (secrets' values included: this goes to the lease's
worker only, in the lease's answer)."""

from __future__ import annotations

from typing import Any

from controlplane_domain.executions import resolution
from controlplane_domain.executions.entity import Candidate, PlanningTask
from controlplane_http.contexts.controller import execution_context_out
from controlplane_wire.base import to_wire
from controlplane_wire.configuration import MCPServerConfig
from controlplane_wire.executions import PlanningCandidate, Resolved, ResolvedFile, ResolvedMember
from controlplane_wire.executions import PlanningTask as WirePlanningTask
from controlplane_wire.skills import ResolvedSkill


def _run(run: resolution.ResolvedRun) -> dict[str, Any]:
    """The fields of a `ResolvedRun` on the wire."""
    if not (run.skills or run.working_dir or run.env_vars or run.secrets or run.files or run.mcp_servers):
        return {"skills": [], "working_dir": None, "env_vars": {}, "secrets": {}, "files": [], "mcp_servers": {}}
    return {
        "skills": [to_wire(skill, ResolvedSkill) for skill in run.skills],
        "working_dir": run.working_dir,
        "env_vars": dict(run.env_vars),
        "secrets": dict(run.secrets),
        "files": [ResolvedFile(path=file.path, content=file.content, mode=f"{file.mode:04o}") for file in run.files],
        "mcp_servers": {name: to_wire(server, MCPServerConfig) for name, server in run.mcp_servers.items()},
    }


def _candidate(candidate: Candidate) -> PlanningCandidate:
    return PlanningCandidate(
        id=candidate.id,
        name=candidate.name,
        description=candidate.description,
        capabilities=list(candidate.capabilities),
    )


def _planning(task: PlanningTask | None) -> WirePlanningTask | None:
    if task is None:
        return None
    return WirePlanningTask(
        plan_id=task.plan_id,
        task=task.task,
        agents=[_candidate(agent) for agent in task.agents],
        teams=[_candidate(team) for team in task.teams],
        instructions=task.instructions,
        plan_schema=dict(task.plan_schema),
    )


def resolved_out(execution_id: str, resolved: resolution.Resolved) -> Resolved:
    members = [ResolvedMember(agent_id=member.agent_id or "", **_run(member)) for member in resolved.members]
    context = execution_context_out(execution_id, resolved.context)
    planning = _planning(resolved.planning)
    return Resolved(context=context, members=members, planning=planning, **_run(resolved.run))
