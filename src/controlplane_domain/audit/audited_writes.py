"""Which writes of the generic repositories are audited, and the events they make.

The generic repositories (`SqlRepository`, `MemoryRepository`) record the writes of an entity whose class declares
how it is audited (the entity's `audited`, an `Audited`): its creates, updates (with the names of the fields that
changed) and deletes are recorded, in the same transaction, whenever an audit context is set (a request). Not
audited: what is not configuration (executions, workflow runs: their own event logs say what happened to them) and
what records its own, more telling, events (API keys: `api_key.create`, `api_key.revoke`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from controlplane_domain.audit.context import AuditContext, current
from controlplane_domain.audit.entity import AuditEvent, Outcome
from controlplane_domain.config import JSONObject


@dataclass(frozen=True, slots=True)
class Audited:
    """How an area's changes read in the log: its resource type, the fields that are bookkeeping rather than
    configuration (their changes alone are not recorded), and fields whose domain name is not the API's."""

    resource_type: str
    ignored: frozenset[str] = frozenset()
    renamed: Mapping[str, str] = field(default_factory=dict)


BOOKKEEPING = frozenset({"id", "organization_id", "created_at", "updated_at"})


def make_event(
    context: AuditContext,
    *,
    organization_id: str,
    action: str,
    resource_type: str,
    resource_id: str,
    outcome: Outcome = Outcome.SUCCEEDED,
    details: JSONObject | None = None,
) -> AuditEvent:
    """An event of `context`'s actor, stamped by its clock and ids."""
    return AuditEvent(
        id=context.new_id(),
        organization_id=organization_id,
        occurred_at=context.now(),
        action=action,
        outcome=outcome,
        resource_type=resource_type,
        resource_id=resource_id,
        actor_subject=context.actor_subject,
        actor_kind=context.actor_kind,
        actor_role=context.actor_role,
        credential_id=context.credential_id,
        client_ip=context.client_ip,
        user_agent=context.user_agent,
        request_id=context.request_id,
        details=details or {},
    )


def _generic() -> AuditContext | None:
    context = current()
    return context if context is not None and context.generic else None


def created(audited: Audited, obj: Any) -> AuditEvent | None:
    """The event of `obj`'s creation, or None when nothing is to be recorded (no context)."""
    context = _generic()
    if context is None:
        return None
    kind = audited.resource_type
    return make_event(
        context, organization_id=obj.organization_id, action=f"{kind}.create", resource_type=kind, resource_id=obj.id
    )


def changed_fields(audited: Audited, before: Any, after: Any) -> list[str]:
    """The names of the configuration fields that differ (bookkeeping left out), sorted, as the API names them."""
    skipped = BOOKKEEPING | audited.ignored
    return sorted(
        audited.renamed.get(each.name, each.name)
        for each in fields(after)
        if each.name not in skipped and getattr(before, each.name) != getattr(after, each.name)
    )


def updated(audited: Audited, before: Any | None, after: Any) -> AuditEvent | None:
    """The event of a change from `before` (None: not known) to `after`, with the fields it changed; None when
    nothing is to be recorded (no context, or only bookkeeping changed)."""
    context = _generic()
    if context is None:
        return None
    details: JSONObject = {}
    if before is not None:
        names = changed_fields(audited, before, after)
        if not names:
            return None
        details["changed"] = names
    kind = audited.resource_type
    return make_event(
        context,
        organization_id=after.organization_id,
        action=f"{kind}.update",
        resource_type=kind,
        resource_id=after.id,
        details=details,
    )


def deleted(audited: Audited, organization_id: str, object_id: str) -> AuditEvent | None:
    context = _generic()
    if context is None:
        return None
    kind = audited.resource_type
    return make_event(
        context, organization_id=organization_id, action=f"{kind}.delete", resource_type=kind, resource_id=object_id
    )
