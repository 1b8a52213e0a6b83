"""Who is calling: an organization, a subject and its role."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Role(StrEnum):
    VIEWER = "viewer"
    MEMBER = "member"
    ADMIN = "admin"


ROLE_RANK = {Role.VIEWER: 0, Role.MEMBER: 1, Role.ADMIN: 2}


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller; every organization-owned query is scoped by `organization_id`."""

    organization_id: str
    subject: str
    role: Role
    method: str
    credential_id: str
    operator: bool = False

    def can(self, needed: Role) -> bool:
        return ROLE_RANK[self.role] >= ROLE_RANK[needed]
