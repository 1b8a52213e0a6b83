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
