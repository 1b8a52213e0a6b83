"""The audit log in SQL: the `audit_events` table, its row mapping and repository, and the one INSERT the generic
repository (`sql/base.py`) runs beside an audited write, on the same connection, in the same transaction."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.columns import Json, UtcDateTime, id_column, metadata, organization_column
from controlplane_adapters.sql.listing import ordered
from controlplane_adapters.sql.pages import read_page_where
from controlplane_adapters.sql.rows import RowMapping
from controlplane_adapters.sql.statements import insert_row
from controlplane_domain.audit.entity import AuditEvent, AuditFilter
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


INSERT = insert_row(audit_events)


AUDIT_ROWS = RowMapping(AuditEvent, audit_events)


class SqlAuditRepository:
    """The audit log: appended to, never changed."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection

    async def add(self, event: AuditEvent) -> None:
        await self.connection.execute(INSERT, AUDIT_ROWS.to_row(event))

    async def get(self, organization_id: str, event_id: str) -> AuditEvent | None:
        t = audit_events
        query = sa.select(t).where(t.c.organization_id == organization_id, t.c.id == event_id)
        row = (await self.connection.execute(query)).first()
        return None if row is None else AUDIT_ROWS.to_domain(row)

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
        return [AUDIT_ROWS.to_domain(row) for row in rows], total
