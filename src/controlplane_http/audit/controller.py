"""The audit log: every change to an organization's configuration, newest first (admins only)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from litestar import Controller
from litestar.params import QueryParameter

from controlplane_domain.audit import usecases
from controlplane_domain.audit.entity import AuditEvent as DomainEvent
from controlplane_domain.audit.entity import AuditFilter, Outcome
from controlplane_domain.errors import ValidationFailed
from controlplane_http.area import HttpArea
from controlplane_http.crud import Listing, Read, Resource, routes
from controlplane_http.handlers import ADMIN
from controlplane_http.signatures import Query, optional, time_range
from controlplane_wire.audit import AuditActor, AuditClient, AuditEvent, AuditEventList
from controlplane_wire.base import to_wire


def moment(name: str, text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise ValidationFailed(name, "must be an RFC 3339 date and time (e.g. 2030-01-01T00:00:00Z)", "query") from None


Actor = Annotated[str | None, QueryParameter(description="the actor's subject")]


def audit_event_out(event: DomainEvent) -> AuditEvent:
    actor = AuditActor(
        subject=event.actor_subject, kind=event.actor_kind, role=event.actor_role, credential_id=event.credential_id
    )
    client = AuditClient(ip=event.client_ip, user_agent=event.user_agent)
    return to_wire(event, AuditEvent, actor=actor, client=client)


def _where(*, since: str | None, until: str | None, **given: Any) -> AuditFilter:
    return AuditFilter(since=moment("from", since), until=moment("to", until), **given)


@routes(
    Resource("audit_event", "AuditEvent", AuditEvent, AuditEventList, audit_event_out, id="event_id"),
    Listing(
        usecases.list_audit_events,
        history=True,
        before=(
            *optional(action=str),
            Query("actor", Actor),
            *optional(resource_type=str, resource_id=str, outcome=Outcome),
            *time_range(
                "events at or after this time (RFC 3339, with its offset)",
                "events before this time (RFC 3339, with its offset)",
            ),
            *optional(request_id=str),
        ),
        where=_where,
        doc="""The organization's audit events, newest first; each filter narrows the list (`from` inclusive, `to`
        exclusive).""",
    ),
    Read(usecases.get_audit_event),
)
class AuditEventController(Controller):
    path = "/api/v1/audit-events"
    tags = ["audit"]
    opt = ADMIN


AREA = HttpArea((AuditEventController,), visible={"event_id": usecases.get_audit_event})
