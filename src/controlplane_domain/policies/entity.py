"""Policies: a Rego module that guards some actions (enforcing or auditing), and the decisions it takes."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.errors import Forbidden

REGO_MAX_LENGTH = 65_536


class Action(enum.StrEnum):
    """The guarded actions: a policy names those it guards."""

    EXECUTE = "execute"
    WORKFLOW_RUN = "workflow.run"
    JOB_CREATE = "job.create"
    JOB_FIRE = "job.fire"
    SECRET_WRITE = "secret.write"  # noqa: S105 - an action's name, not a password


class Enforcement(enum.StrEnum):
    ENFORCE = "enforce"
    """A deny message refuses the action (403 POLICY_DENIED)."""
    AUDIT = "audit"
    """Deny messages are recorded in the decision log; the action goes on."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """A Rego module whose `deny` set of messages decides the actions it guards."""

    audited: ClassVar[Audited] = Audited("policy")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    description: str | None
    rego: str
    enabled: bool
    enforcement: Enforcement
    actions: tuple[Action, ...]
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Outcome:
    """One policy's answer to one input: its deny messages, or the error its evaluation raised."""

    policy_id: str
    deny: tuple[str, ...] = ()
    error: str | None = None

    @property
    def allowed(self) -> bool:
        return not self.deny and self.error is None


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """A row of the decision log: one policy's verdict on one guarded action (`evaluation_id` groups the rows of
    one action's evaluation)."""

    id: str
    organization_id: str
    evaluation_id: str
    action: Action
    policy_id: str
    policy_name: str
    enforcement: Enforcement
    allowed: bool
    deny: tuple[str, ...]
    error: str | None
    subject: str | None
    roles: tuple[str, ...]
    resource_type: str
    resource_id: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Resource:
    """What the action is on: `{type, id, attributes}` in the input document."""

    type: str
    id: str | None
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class DecisionFilter:
    action: Action | None = None
    policy_id: str | None = None
    allowed: bool | None = None
    since: datetime | None = None
    """Decisions taken at or after this instant."""
    until: datetime | None = None
    """Decisions taken before this instant."""


class PolicyDenied(Forbidden):
    """An enforcing policy denied the action (or failed to evaluate: fail closed). `denial`: what the audit log
    records of it (the gate sets it; the fast lane records it for the requests it serves, see docs/audit.md)."""

    code = "POLICY_DENIED"
    denial: Denial | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Denial:
    """A refused action as the audit log records it: `policy.<action>` on the resource, with the messages."""

    organization_id: str
    action: str
    resource_type: str
    resource_id: str
    details: dict[str, Any]


class PolicyCompileError(Exception):
    """A Rego module that does not compile: the compiler's message, and where (1-based; None when unknown)."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
