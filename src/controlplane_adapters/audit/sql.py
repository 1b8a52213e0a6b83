"""The audit log in SQL: the `audit_events` table, its row mapping and repository, and the one INSERT the generic
repository (`sql/base.py`) runs beside an audited write, on the same connection, in the same transaction."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.columns import Json, UtcDateTime, id_column, metadata, organization_column, to_json
from controlplane_adapters.sql.listing import ordered
from controlplane_adapters.sql.pages import read_page_where
from controlplane_adapters.sql.statements import insert_row
from controlplane_domain.audit.entity import AuditEvent, AuditFilter, Outcome
from controlplane_domain.paging import PageRequest

audit_events = sa.Table(
    "audit_events",
    metadata,
    id_column(),
    organization_column(),
    sa.Column("occurred_at", UtcDateTime(), nullable=False),
    sa.Column("action", sa.String(128), nullable=False),
    sa.Column("outcome", sa.String(16), nullable=False),
    sa.Column("resource_type", sa.String(64), nullable=False),
    sa.Column("resource_id", sa.String(255), nullable=False),
    sa.Column("actor_subject", sa.String(255), nullable=False),
    sa.Column("actor_kind", sa.String(32), nullable=False),
    sa.Column("actor_role", sa.String(16), nullable=False),
    sa.Column("credential_id", sa.String(255), nullable=True),
    sa.Column("client_ip", sa.String(64), nullable=True),
    sa.Column("user_agent", sa.String(512), nullable=True),
    sa.Column("request_id", sa.String(128), nullable=True),
    sa.Column("details", Json, nullable=False),
    # The list, newest first, and its time range; an object's history.
    sa.Index("ix_audit_events_org_occurred", "organization_id", "occurred_at", "id"),
    sa.Index("ix_audit_events_org_resource", "organization_id", "resource_type", "resource_id"),
)


def audit_event_to_row(event: AuditEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "organization_id": event.organization_id,
        "occurred_at": event.occurred_at,
        "action": event.action,
        "outcome": event.outcome.value,
        "resource_type": event.resource_type,
        "resource_id": event.resource_id,
        "actor_subject": event.actor_subject,
        "actor_kind": event.actor_kind,
        "actor_role": event.actor_role,
        "credential_id": event.credential_id,
        "client_ip": event.client_ip,
        "user_agent": event.user_agent,
        "request_id": event.request_id,
        "details": to_json(event.details),
    }


def audit_event_to_domain(row: Any) -> AuditEvent:
    return AuditEvent(
        id=row.id,
        organization_id=row.organization_id,
        occurred_at=row.occurred_at,
        action=row.action,
        outcome=Outcome(row.outcome),
        resource_type=row.resource_type,
        resource_id=row.resource_id,
        actor_subject=row.actor_subject,
        actor_kind=row.actor_kind,
        actor_role=row.actor_role,
        credential_id=row.credential_id,
        client_ip=row.client_ip,
        user_agent=row.user_agent,
        request_id=row.request_id,
        details=dict(row.details),
    )


INSERT = insert_row(audit_events)


class SqlAuditRepository:
    """The audit log: appended to, never changed."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection

    async def add(self, event: AuditEvent) -> None:
        await self.connection.execute(INSERT, audit_event_to_row(event))

    async def get(self, organization_id: str, event_id: str) -> AuditEvent | None:
        t = audit_events
        query = sa.select(t).where(t.c.organization_id == organization_id, t.c.id == event_id)
        row = (await self.connection.execute(query)).first()
        return None if row is None else audit_event_to_domain(row)

    async def list_page(
        self, organization_id: str, page: PageRequest, where: AuditFilter
    ) -> tuple[list[AuditEvent], int]:
        t = audit_events
        conditions: list[sa.ColumnElement[bool]] = [t.c.organization_id == organization_id]
        for column, value in (
            (t.c.action, where.action),
            (t.c.actor_subject, where.actor),
            (t.c.resource_type, where.resource_type),
            (t.c.resource_id, where.resource_id),
            (t.c.outcome, where.outcome.value if where.outcome is not None else None),
            (t.c.request_id, where.request_id),
        ):
            if value is not None:
                conditions.append(column == value)
        if where.since is not None:
            conditions.append(t.c.occurred_at >= where.since)
        if where.until is not None:
            conditions.append(t.c.occurred_at < where.until)
        order = ordered(page, t.c.occurred_at, t.c.id)
        rows, total = await read_page_where(self.connection, organization_id, page, t, conditions, order)
        return [audit_event_to_domain(row) for row in rows], total
