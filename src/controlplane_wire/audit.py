"""Audit log wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from controlplane_domain.audit.entity import Outcome
from controlplane_wire.base import OrganizationResource, Page


class AuditActor(msgspec.Struct, kw_only=True):
    """Who: the principal's subject, how it authenticated (`api_key`, `jwt`, `none` when authentication is off,
    `cli` for the operator's command line), its role, and the credential it used."""

    subject: str
    kind: str
    role: str
    credential_id: str | None


class AuditClient(msgspec.Struct, kw_only=True):
    """From where: the client's address as the server saw it, and its User-Agent."""

    ip: str | None
    user_agent: str | None


class AuditEvent(OrganizationResource, kw_only=True):
    occurred_at: datetime
    action: str
    """`<resource_type>.<verb>`: `agent.create`, `agent.update`, `agent.delete`, `api_key.revoke`, ..."""
    outcome: Outcome
    resource_type: str
    resource_id: str
    actor: AuditActor
    client: AuditClient
    request_id: str | None
    details: dict[str, Any]
    """Names and ids only, never a value: an update's `changed` field names, a denial's policies and messages."""


class AuditEventList(Page[AuditEvent]):
    items: list[AuditEvent]
