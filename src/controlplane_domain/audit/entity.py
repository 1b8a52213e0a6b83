"""The audit log: one event for each change of an organization's configuration (and each policy denial), with who
made it, from where, in which request."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from controlplane_domain.config import JSONObject


class Outcome(StrEnum):
    SUCCEEDED = "succeeded"
    DENIED = "denied"


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEvent:
    """What was done (`action`, e.g. `agent.update`, to `resource_type`/`resource_id`), by whom (the actor's subject,
    how it authenticated, its role and credential), from where (client address and user agent), in which request,
    and when. `details` holds names (the fields a change touched) and ids, never a value."""

    id: str
    organization_id: str
    occurred_at: datetime
    action: str
    outcome: Outcome
    resource_type: str
    resource_id: str
    actor_subject: str
    actor_kind: str
    actor_role: str
    credential_id: str | None
    client_ip: str | None
    user_agent: str | None
    request_id: str | None
    details: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditFilter:
    """The filters of the audit log's list; None: no condition. `since` is inclusive, `until` exclusive."""

    action: str | None = None
    actor: str | None = None
    resource_type: str | None = None
    resource_id: str | None = None
    outcome: Outcome | None = None
    since: datetime | None = None
    until: datetime | None = None
    request_id: str | None = None

    def keeps(self, event: AuditEvent) -> bool:
        """Whether `event` meets every condition (the memory store's filter; SQL says the same in its WHERE)."""
        return (
            self.action in (None, event.action)
            and self.actor in (None, event.actor_subject)
            and self.resource_type in (None, event.resource_type)
            and self.resource_id in (None, event.resource_id)
            and self.outcome in (None, event.outcome)
            and self.request_id in (None, event.request_id)
            and (self.since is None or event.occurred_at >= self.since)
            and (self.until is None or event.occurred_at < self.until)
        )
