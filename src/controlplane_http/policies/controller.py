"""Policies (admins write them): create, list, get, patch, delete, the dry run; and the decision log."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from litestar import Controller, post
from litestar.params import JSONBody
from litestar.types import Scope

from controlplane_domain.policies import entity, gate, usecases
from controlplane_domain.policies.entity import Action, DecisionFilter
from controlplane_http.area import HttpArea
from controlplane_http.audit.controller import moment
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, as_command, routes
from controlplane_http.handlers import ADMIN, caller, errors
from controlplane_http.signatures import optional, time_range
from controlplane_wire.base import to_wire
from controlplane_wire.configuration import given_fields
from controlplane_wire.policies import (
    DecisionPrincipal,
    DecisionResource,
    EvaluateRequest,
    Evaluation,
    Policy,
    PolicyCreate,
    PolicyDecision,
    PolicyDecisionList,
    PolicyList,
    PolicyOutcome,
    PolicyUpdate,
)


def decision_out(decision: entity.Decision) -> PolicyDecision:
    principal = DecisionPrincipal(subject=decision.subject, roles=list(decision.roles))
    resource = DecisionResource(type=decision.resource_type, id=decision.resource_id)
    return to_wire(decision, PolicyDecision, principal=principal, resource=resource)


def _update(data: PolicyUpdate) -> usecases.UpdatePolicy:
    given = given_fields(data)
    if "actions" in given:
        given["actions"] = tuple(given["actions"])
    return usecases.UpdatePolicy(**given)


def _utc(moment: datetime | None) -> datetime | None:
    """A query's instant; one without a time zone is UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


@routes(
    Resource("policy", "Policy", Policy, PolicyList, plural=("policies", "Policies")),
    Create(
        usecases.create_policy,
        body=PolicyCreate,
        command=as_command(usecases.CreatePolicy),
        codes=(409, 415, 503),
        opt=ADMIN,
        doc="Store a policy; its module is compiled first (422 with the compiler's message and line).",
    ),
    Listing(usecases.list_policies),
    Read(usecases.get_policy),
    Update(
        usecases.update_policy,
        body=PolicyUpdate,
        command=_update,
        codes=(404, 409, 415, 503),
        opt=ADMIN,
        doc="Change the given fields; a new module is compiled first (422 with the compiler's message and line).",
    ),
    Remove(usecases.delete_policy, force=False, codes=(404,), opt=ADMIN),
)
class PolicyController(Controller):
    path = "/api/v1/policies"
    tags = ["policies"]

    @post("/evaluate", operation_id="evaluatePolicies", status_code=200, responses=errors(415, 503))
    async def evaluate(self, data: JSONBody[EvaluateRequest], scope: Scope) -> Evaluation:
        """A dry run: what the action's enabled policies decide for the caller on this resource and request, now
        (nothing is logged, nothing is done)."""
        ports, principal = caller(scope)
        resource = entity.Resource(data.resource.type, data.resource.id, dict(data.resource.attributes))
        result = await gate.dry_run(
            ports, data.action, principal.organization_id, principal, resource, dict(data.request)
        )
        return Evaluation(
            allowed=result.allowed,
            decisions=[
                PolicyOutcome(
                    policy_id=policy.id,
                    policy_name=policy.name,
                    enforcement=policy.enforcement,
                    deny=list(outcome.deny),
                    error=outcome.error,
                )
                for policy, outcome in result.outcomes
            ],
        )


def _where(*, since: str | None, until: str | None, **given: Any) -> DecisionFilter:
    return DecisionFilter(since=_utc(moment("from", since)), until=_utc(moment("to", until)), **given)


@routes(
    Resource("decision", "PolicyDecision", PolicyDecision, PolicyDecisionList, decision_out),
    Listing(
        usecases.list_decisions,
        history=True,
        before=(
            *optional(action=Action, policy_id=str, allowed=bool),
            *time_range(
                "decisions taken at or after this instant (RFC 3339)", "decisions taken before this instant (RFC 3339)"
            ),
        ),
        where=_where,
        doc="""Every decision of every policy on a guarded action (one an enabled policy and action), oldest first;
        `allowed=false` finds the denials (an audit policy's too, and the evaluations that failed).""",
    ),
)
class PolicyDecisionController(Controller):
    path = "/api/v1/policy-decisions"
    tags = ["policies"]


AREA = HttpArea((PolicyController, PolicyDecisionController), visible={"policy_id": usecases.get_policy})
