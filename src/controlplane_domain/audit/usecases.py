"""Audit use cases: record an event (in the caller's transaction, or a denial in one of its own), list, read."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from controlplane_domain.audit.audited_writes import make_event
from controlplane_domain.audit.context import AuditContext, current
from controlplane_domain.audit.entity import AuditEvent, AuditFilter, Outcome
from controlplane_domain.config import JSONObject
from controlplane_domain.errors import DomainError, ValidationFailed, found
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient

# Keys of `details` whose values are never kept, at any depth (a careless caller's secret stays out of the log).
REDACTED_KEYS = frozenset({"value", "values", "secret", "token", "password", "plaintext", "api_key", "authorization"})
REDACTED = "[redacted]"


def redact(details: Mapping[str, Any]) -> JSONObject:
    """`details` with the values of `REDACTED_KEYS` replaced, in nested objects and lists too."""

    def clean(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {str(k): REDACTED if str(k).lower() in REDACTED_KEYS else clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(item) for item in value]
        return value

    cleaned: JSONObject = clean(details)
    return cleaned


async def record(
    uow: UnitOfWork,
    *,
    organization_id: str,
    action: str,
    resource_type: str,
    resource_id: str,
    outcome: Outcome | str = Outcome.SUCCEEDED,
    details: Mapping[str, Any] | None = None,
    context: AuditContext | None = None,
) -> AuditEvent | None:
    """Append an event to the log in `uow`'s transaction (it is kept only if the caller commits), attributed to
    `context` (by default the current request's); None, and nothing recorded, when there is no context (work no
    request asked for). `details` is for names and ids: values under `REDACTED_KEYS` are replaced.

    Policies call it for a decision that denies, e.g. `record(uow, organization_id=org, action="agent.execute",
    resource_type="agent", resource_id=agent_id, outcome="denied", details={"policies": [...], "messages": [...]})`
    (or `record_denial`, which commits it on its own, as a denied action's own transaction rolls back)."""
    acting = context or current()
    if acting is None:
        return None
    event = make_event(
        acting,
        organization_id=organization_id,
        action=action,
        resource_type=resource_type,
        resource_id=resource_id,
        outcome=Outcome(outcome),
        details=redact(details or {}),
    )
    await uow.audit_events.add(event)
    return event


@retry_transient
async def record_denial(
    ports: Ports,
    *,
    organization_id: str,
    action: str,
    resource_type: str,
    resource_id: str,
    details: Mapping[str, Any] | None = None,
    context: AuditContext | None = None,
) -> AuditEvent | None:
    """Record a denied action in a transaction of its own, committed (the denied action's rolls back when it
    raises Forbidden); None when there is no context."""
    acting = context or current()
    if acting is None:
        return None
    async with ports.uow() as uow:
        event = await record(
            uow,
            organization_id=organization_id,
            action=action,
            resource_type=resource_type,
            resource_id=resource_id,
            outcome=Outcome.DENIED,
            details=details,
            context=acting,
        )
        await uow.commit()
    return event


def check_filter(where: AuditFilter) -> None:
    for name, moment in (("from", where.since), ("to", where.until)):
        if moment is not None and moment.utcoffset() is None:
            raise ValidationFailed(name, "must carry a UTC offset (e.g. 2030-01-01T00:00:00Z)", "query")
    if where.since is not None and where.until is not None and where.since >= where.until:
        raise ValidationFailed("to", "must be after `from`", "query")


async def list_audit_events(
    ports: Ports, organization_id: str, page: PageRequest, where: AuditFilter
) -> Page[AuditEvent]:
    """The organization's events that `where` keeps, newest first (this node's policy denials waiting to be
    written are written first, through the port `Ports.policies`: a client reads its own)."""
    check_filter(where)
    if ports.policies is not None:
        with contextlib.suppress(DomainError):  # the store refused them: they wait for the next flush
            await ports.policies.flush(ports.uow)
    async with ports.read() as uow:
        items, total = await uow.audit_events.list_page(organization_id, page, where)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


async def get_audit_event(ports: Ports, organization_id: str, event_id: str) -> AuditEvent:
    async with ports.read() as uow:
        event = await uow.audit_events.get(organization_id, event_id)
    return found(event, "audit event", event_id)
