"""Who is calling: an organization, a subject and its role."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeGuard

IDENTITY_MAX_LENGTH = 255
IDENTITY = re.compile(rf"[\x21-\x7e]{{1,{IDENTITY_MAX_LENGTH}}}")
"""An organization id or a subject as a credential names it (a JWT's `org_id` and `sub`, SERVICE_DEFAULT_ORG):
1 to 255 printable ASCII characters, no space (`!` to `~`). Every store takes it as it is (no NUL, no lone
surrogate, within the columns' 255); a credential naming another is refused (401)."""


def is_identity(text: object) -> TypeGuard[str]:
    """Whether `text` is an organization id or a subject of the documented shape (IDENTITY)."""
    return isinstance(text, str) and IDENTITY.fullmatch(text) is not None


class Role(StrEnum):
    VIEWER = "viewer"
    MEMBER = "member"
    ADMIN = "admin"
    WORKER = "worker"  # an API key that runs executions: the worker protocol only (not on the ladder below)


# The ladder of the people's roles: a route needs one of them, and any role above it will do. `worker` is not on
# it: a worker key may call the routes marked as the worker protocol, and nothing else.
ROLE_RANK = {Role.VIEWER: 0, Role.MEMBER: 1, Role.ADMIN: 2}


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller; every organization-owned query is scoped by `organization_id`.

    A worker key may be bound to environments and queues (`environment_ids`, `queue_ids`): it then works only
    on those queues and the queues of those environments. Unbound (both empty), it works on any queue of its
    organization."""

    organization_id: str
    subject: str
    role: Role
    method: str
    credential_id: str
    operator: bool = False
    environment_ids: frozenset[str] = frozenset()
    queue_ids: frozenset[str] = frozenset()

    def can(self, needed: Role) -> bool:
        """Whether the caller's role is on the ladder at `needed` or above (a worker never is)."""
        rank = ROLE_RANK.get(self.role)
        return rank is not None and rank >= ROLE_RANK[needed]

    @property
    def may_lease(self) -> bool:
        """Whether the caller may lease executions, and so receive the secret values a lease carries: a worker key,
        the service's own key (the operator), or anyone when authentication is off (`method` "none")."""
        return self.role is Role.WORKER or self.operator or self.method == "none"

    @property
    def bound(self) -> bool:
        """A worker key bound to environments or queues."""
        return bool(self.environment_ids or self.queue_ids)

    def binds_queue(self, queue_id: str, environment_id: str) -> bool:
        """Whether the caller's bindings let it work on this queue (of this environment); unbound callers may."""
        return not self.bound or queue_id in self.queue_ids or environment_id in self.environment_ids
