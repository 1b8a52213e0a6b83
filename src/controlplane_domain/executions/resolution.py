"""What a lease carries besides the execution: everything its worker needs to run the agent (or the team and each
of its members), already resolved: skills, the execution's stored context, the execution environment with its
`{{secret:NAME}}` references filled, the secrets it names, files and MCP servers.

Read in the lease's own unit of work (`lease_needs`: one read when the agent has no team, no skills and no
execution environment), then the secrets revealed for the lease's worker (`reveal_needs`), which records every
read. Nothing here is stored: the values reach the worker in the lease's answer only.

Layers, as for skills: an agent runs with its team's execution environment under its own (an agent of a team);
a team execution with the team's (the team's own run) and, for each member, the team's under the member's."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from controlplane_domain.agents.entity import Agent
from controlplane_domain.config import ExecutionEnvironment, MCPServerConfig
from controlplane_domain.contexts.entity import NO_CONTEXT, ResolvedContext
from controlplane_domain.errors import NotFound
from controlplane_domain.executions.entity import Execution, ExecutionStatus, PlanningTask, status_event
from controlplane_domain.executions.transitions import Change, change, done_event
from controlplane_domain.integrations.entity import IntegrationFile
from controlplane_domain.integrations.resolve import ResolvedIntegrations
from controlplane_domain.integrations.resolve import resolve_integrations as resolve_integration_ids
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient
from controlplane_domain.secrets.entity import SecretsKeyMissing
from controlplane_domain.secrets.ports import SecretCipher
from controlplane_domain.secrets.references import referenced_names, resolve_references
from controlplane_domain.secrets.reveal import reveal_for_lease
from controlplane_domain.skills.attachments import resolved_skills
from controlplane_domain.skills.entity import ResolvedSkill
from controlplane_domain.teams.entity import Team, TeamView

NO_INTEGRATIONS = ResolvedIntegrations()


async def resolve_integrations(
    uow: UnitOfWork, cipher: SecretCipher | None, organization_id: str, environment: ExecutionEnvironment
) -> ResolvedIntegrations:
    """Where the integrations of an execution environment (`integration_ids`, `custom_integration_ids`) join its
    lease: their env vars (built-in integrations' secret fields opened), files and the secret names custom ones
    give (`integrations/resolve.py`). Free when the environment names no integration. An integration sealed by
    another key (or none configured) answers the lease 503, as a secret's would when revealed."""
    if not environment.integration_ids and not environment.custom_integration_ids:
        return NO_INTEGRATIONS
    return await resolve_integration_ids(
        uow, cipher, organization_id, environment.integration_ids, environment.custom_integration_ids
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RunNeeds:
    """One run (the agent, the team's own, or a member) before its secrets are revealed."""

    agent_id: str | None = None
    skills: tuple[ResolvedSkill, ...] = ()
    environment: ExecutionEnvironment | None = None  # the layers merged; integrations' env vars joined
    integrations: ResolvedIntegrations = NO_INTEGRATIONS

    def given_secrets(self) -> list[str]:
        """The secrets whose values the worker receives as they are (the environment's `secrets`, then the
        integrations')."""
        own = [] if self.environment is None else list(self.environment.secrets)
        return list(dict.fromkeys([*own, *self.integrations.secret_names]))

    def secret_names(self) -> list[str]:
        """Every secret the run needs revealed: given, or referred to."""
        referred = [] if self.environment is None else referenced_names(self.environment)
        return list(dict.fromkeys([*referred, *self.integrations.secret_names]))


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedRun:
    """One run as its worker gets it: values filled in."""

    agent_id: str | None = None
    skills: tuple[ResolvedSkill, ...] = ()
    working_dir: str | None = None
    env_vars: Mapping[str, str] = field(default_factory=dict)
    secrets: Mapping[str, str] = field(default_factory=dict)
    files: tuple[IntegrationFile, ...] = ()
    mcp_servers: Mapping[str, MCPServerConfig] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseNeeds:
    """What a lease reads, secrets not yet revealed: the execution's stored context, the run of the agent (or of
    the team itself) and, for a team execution, each member's run in the team's order."""

    context: ResolvedContext = NO_CONTEXT
    run: RunNeeds = RunNeeds()
    members: tuple[RunNeeds, ...] = ()
    planning: PlanningTask | None = None

    def secret_names(self) -> list[str]:
        return list(dict.fromkeys(name for run in (self.run, *self.members) for name in run.secret_names()))


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolved:
    """What the lease's answer carries as `resolved`."""

    context: ResolvedContext = NO_CONTEXT
    run: ResolvedRun = ResolvedRun()
    members: tuple[ResolvedRun, ...] = ()
    planning: PlanningTask | None = None
    """A planning execution's task (`Ports.owners`); None for any other."""


NOTHING_RESOLVED = Resolved()


def layered(*environments: ExecutionEnvironment | None) -> ExecutionEnvironment | None:
    """Execution environments merged, a later one over the earlier: `working_dir` the last one given, `env_vars`
    and `mcp_servers` by key (a later server replaces an earlier one of its name whole), `secrets` and
    `integration_ids` joined in order, each once. None when none is given."""
    given = [environment for environment in environments if environment is not None]
    if len(given) <= 1:
        return given[0] if given else None
    merged = given[0]
    for later in given[1:]:
        merged = replace(
            merged,
            working_dir=later.working_dir if later.working_dir is not None else merged.working_dir,
            env_vars={**merged.env_vars, **later.env_vars},
            secrets=list(dict.fromkeys([*merged.secrets, *later.secrets])),
            integration_ids=list(dict.fromkeys([*merged.integration_ids, *later.integration_ids])),
            mcp_servers={**merged.mcp_servers, **later.mcp_servers},
        )
    return merged


async def _run_needs(
    uow: UnitOfWork,
    cipher: SecretCipher | None,
    organization_id: str,
    agent: Agent | None,
    team: Team | None,
    environment_id: str | None,
) -> RunNeeds:
    """One run's skills (environment, team, agent: only the layers that have any are read) and environment."""
    agent_layer = agent.id if agent is not None and agent.skill_ids else None
    team_layer = team.id if team is not None and team.skill_ids else None
    agent_id = None if agent is None else agent.id
    skills: list[ResolvedSkill] = []
    if agent_layer or team_layer or environment_id:
        skills = await resolved_skills(uow, organization_id, agent_layer, team_layer, environment_id)
    environment = layered(
        None if team is None else team.execution_environment, None if agent is None else agent.execution_environment
    )
    integrations = NO_INTEGRATIONS
    if environment is not None:
        integrations = await resolve_integrations(uow, cipher, organization_id, environment)
        if integrations.env_vars:  # the environment's own variables win over its integrations'
            environment = replace(environment, env_vars={**integrations.env_vars, **environment.env_vars})
    return RunNeeds(
        agent_id=agent_id,
        skills=tuple(skills),
        environment=environment,
        integrations=integrations,
    )


async def lease_needs(
    uow: UnitOfWork,
    organization_id: str,
    execution_id: str,
    environment_id: str,
    agent: Agent | None,
    team: TeamView | None,
    cipher: SecretCipher | None = None,
) -> LeaseNeeds:
    """What the leased execution needs, read in the lease's unit of work: `environment_id` is its queue's
    environment (a skill layer), `agent` its agent (an agent execution), `team` its team with the members (a
    team execution). One read (the stored context, and whether the environment has skills) when the agent has
    no team, no skills and no execution environment; more only for what is there."""
    extras = await uow.executions.lease_extras(organization_id, execution_id, environment_id)
    context = extras.context or NO_CONTEXT
    skills_of_environment = environment_id if extras.environment_has_skills else None
    if team is not None:
        own = await _run_needs(uow, cipher, organization_id, None, team.team, skills_of_environment)
        members = [
            await _run_needs(uow, cipher, organization_id, member, team.team, skills_of_environment)
            for member in team.members
        ]
        return LeaseNeeds(context=context, run=own, members=tuple(members))
    agent_team = None
    if agent is not None and agent.team_id:
        agent_team = await uow.teams.get(organization_id, agent.team_id)
    run = await _run_needs(uow, cipher, organization_id, agent, agent_team, skills_of_environment)
    return LeaseNeeds(context=context, run=run)


def _filled(run: RunNeeds, values: Mapping[str, str]) -> ResolvedRun:
    if not run.skills and run.environment is None and run.integrations is NO_INTEGRATIONS:
        return ResolvedRun(agent_id=run.agent_id)
    environment = None if run.environment is None else resolve_references(run.environment, values)
    return ResolvedRun(
        agent_id=run.agent_id,
        skills=run.skills,
        working_dir=None if environment is None else environment.working_dir,
        env_vars={} if environment is None else dict(environment.env_vars),
        secrets={name: values[name] for name in run.given_secrets()},
        files=tuple(run.integrations.files),
        mcp_servers={} if environment is None else dict(environment.mcp_servers),
    )


def filled(needs: LeaseNeeds, values: Mapping[str, str]) -> Resolved:
    """The needs with the revealed `values` (every name of `needs.secret_names()`) filled in."""
    return Resolved(
        context=needs.context,
        run=_filled(needs.run, values),
        members=tuple(_filled(member, values) for member in needs.members),
        planning=needs.planning,
    )


@retry_transient
async def reveal(ports: Ports, execution: Execution, names: list[str]) -> dict[str, str]:
    """The secrets' values for the execution's worker, each read recorded (who, when, which execution)."""
    if ports.secrets_cipher is None:
        raise SecretsKeyMissing()
    async with ports.uow() as uow:
        values = await reveal_for_lease(
            uow, ports.secrets_cipher, ports.ids, execution.organization_id, names,
            execution_id=execution.id, worker_id=execution.worker_id or "", now=ports.clock.now(),
        )  # fmt: skip
        await uow.commit()
    return values


async def fail_unresolvable(ports: Ports, leased: Execution, reason: str) -> None:
    """End a lease whose needs cannot be met: failed (no attempt would fare better), or cancelled when asked."""

    def fail(execution: Execution, now: datetime) -> Change | Execution:
        held = (execution.status, execution.worker_id, execution.attempt)
        if held != (ExecutionStatus.RUNNING, leased.worker_id, leased.attempt):  # the lease moved on meanwhile
            return execution
        if execution.cancel_requested:
            changed = execution.transition(ExecutionStatus.CANCELLED, now, error="cancelled", lease_expires_at=None)
        else:
            changed = execution.transition(ExecutionStatus.FAILED, now, error=reason, lease_expires_at=None)
        return changed, [status_event(changed), done_event(changed)]

    with contextlib.suppress(NotFound):
        await change(ports, leased.organization_id, leased.id, fail)
