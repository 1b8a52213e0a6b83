"""The gate before every guarded action: the organization's enabled policies for the action decide, the decisions
go to the log, and an enforcing policy's deny (or its failure to evaluate) refuses the action."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from controlplane_domain.audit.audited_writes import make_event
from controlplane_domain.audit.context import AuditContext
from controlplane_domain.audit.context import current as current_audit
from controlplane_domain.audit.entity import Outcome as AuditOutcome
from controlplane_domain.errors import Unavailable
from controlplane_domain.policies.cache import Guard, Guards
from controlplane_domain.policies.entity import (
    Action,
    Decision,
    Denial,
    Enforcement,
    Outcome,
    Policy,
    PolicyDenied,
    Resource,
)
from controlplane_domain.policies.runtime import PolicyRuntime
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.principal import Principal

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def nanoseconds(moment: datetime) -> int:
    """What Rego's `time.*` built-ins take: nanoseconds since the Unix epoch."""
    return (moment - EPOCH) // MICROSECOND * 1000


def input_document(
    action: Action,
    organization_id: str,
    principal: Principal | None,
    resource: Resource,
    request: Mapping[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """The policies' `input` (docs/policies.md). No principal: the scheduler or a webhook's sender acts."""
    return {
        "action": action.value,
        "principal": {
            "subject": None if principal is None else principal.subject,
            "roles": [] if principal is None else [principal.role.value],
            "organization_id": organization_id,
        },
        "resource": {"type": resource.type, "id": resource.id, "attributes": resource.attributes},
        "request": request,
        "time": nanoseconds(now),
    }


async def guard(
    ports: Ports,
    action: Action,
    organization_id: str,
    principal: Principal | None,
    resource: Resource,
    request: Mapping[str, Any],
    *,
    uow: UnitOfWork | None = None,
) -> None:
    """Let the action go on, or raise PolicyDenied. Without an enabled policy for the action in the organization
    (as this node last read, see cache.py), nothing is read, evaluated or logged. `uow`: the caller's open unit
    of work, where the organization's policies are read when this node does not know them."""
    runtime = ports.policies
    if runtime is None:
        return
    guards = runtime.cache.known(organization_id)
    if guards is None:
        guards = await _read(ports, runtime, organization_id, uow)
    found = guards.get(action)
    if found is None:
        return
    now = ports.clock.now()
    document = input_document(action, organization_id, principal, resource, request, now)
    outcomes = await runtime.evaluate(found.prepared, document)
    runtime.log.hold(_decisions(ports, found, outcomes, document, now))
    refused = [(p, o) for p, o in zip(found.policies, outcomes, strict=True) if _refuses(p, o)]
    if refused:
        denied = _denied(action, refused)
        denied.denial = Denial(
            organization_id=organization_id,
            action=action.value if "." in action.value else f"{resource.type}.{action.value}",
            resource_type=resource.type,
            resource_id=resource.id or "",
            details={"messages": denied.details["messages"], "policies": denied.details["policies"]},
        )
        context = current_audit()
        if context is not None:  # a request's (Litestar's path; the fast lane records its own: hold_denial)
            hold_denial(runtime, denied.denial, context)
        raise denied


def hold_denial(runtime: PolicyRuntime, denial: Denial, context: AuditContext) -> None:
    """The audit log's event of a refused action, written behind with the decisions (the action's own transaction
    rolls back)."""
    event = make_event(
        context,
        organization_id=denial.organization_id,
        action=denial.action,
        resource_type=denial.resource_type,
        resource_id=denial.resource_id,
        outcome=AuditOutcome.DENIED,
        details=denial.details,
    )
    runtime.log.hold_denial(event)


async def _read(ports: Ports, runtime: PolicyRuntime, organization_id: str, uow: UnitOfWork | None) -> Guards:
    generation = runtime.cache.generation
    if uow is not None:
        enabled = await uow.policies.enabled(organization_id)
    else:
        async with ports.read() as reader:
            enabled = await reader.policies.enabled(organization_id)
    return runtime.cache.learned(organization_id, generation, enabled)


def _refuses(policy: Policy, outcome: Outcome) -> bool:
    return policy.enforcement is Enforcement.ENFORCE and not outcome.allowed


def _messages(policy: Policy, outcome: Outcome) -> list[str]:
    if outcome.error is not None:
        return [f"policy '{policy.name}' could not be evaluated: {outcome.error}"]
    return list(outcome.deny)


def _denied(action: Action, refused: Sequence[tuple[Policy, Outcome]]) -> PolicyDenied:
    messages = [message for policy, outcome in refused for message in _messages(policy, outcome)]
    details = {
        "action": action.value,
        "messages": messages,
        "policies": [{"policy_id": p.id, "name": p.name, "deny": list(o.deny), "error": o.error} for p, o in refused],
    }
    return PolicyDenied(f"denied by policy: {'; '.join(messages)}", details)


def _decisions(
    ports: Ports, guard: Guard, outcomes: list[Outcome], document: dict[str, Any], now: datetime
) -> list[Decision]:
    evaluation_id = ports.ids.new_id()
    principal, resource = document["principal"], document["resource"]
    return [
        Decision(
            id=ports.ids.new_id(),
            organization_id=policy.organization_id,
            evaluation_id=evaluation_id,
            action=Action(document["action"]),
            policy_id=policy.id,
            policy_name=policy.name,
            enforcement=policy.enforcement,
            allowed=outcome.allowed,
            deny=outcome.deny,
            error=outcome.error,
            subject=principal["subject"],
            roles=tuple(principal["roles"]),
            resource_type=resource["type"],
            resource_id=resource["id"],
            created_at=now,
        )
        for policy, outcome in zip(guard.policies, outcomes, strict=True)
    ]


@dataclass(frozen=True, slots=True)
class DryRun:
    """What `guard` would decide now: allowed, and each enabled policy's outcome (nothing is logged)."""

    allowed: bool
    outcomes: list[tuple[Policy, Outcome]]


def policy_runtime(ports: Ports) -> PolicyRuntime:
    """The policy engine, or Unavailable (503) on a server without one."""
    if ports.policies is None:
        raise Unavailable("no policy engine is configured")
    return ports.policies


async def dry_run(
    ports: Ports,
    action: Action,
    organization_id: str,
    principal: Principal | None,
    resource: Resource,
    request: Mapping[str, Any],
) -> DryRun:
    """`POST /api/v1/policies/evaluate`: the action's enabled policies on this input, as `guard` would decide."""
    runtime = policy_runtime(ports)
    guards = runtime.cache.known(organization_id)
    if guards is None:
        guards = await _read(ports, runtime, organization_id, None)
    found = guards.get(action)
    if found is None:
        return DryRun(True, [])
    document = input_document(action, organization_id, principal, resource, request, ports.clock.now())
    pairs = list(zip(found.policies, await runtime.evaluate(found.prepared, document), strict=True))
    return DryRun(not any(_refuses(p, o) for p, o in pairs), pairs)
