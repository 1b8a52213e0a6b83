"""Secrets: named values an organization's agents and teams use, kept encrypted; the value is write-only."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.errors import Unavailable

SECRET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
MAX_VALUE_BYTES = 64 * 1024
"""A value's largest size, counted in UTF-8 bytes."""


@dataclass(frozen=True, slots=True)
class SealedValue:
    """A value as stored: AES-GCM's nonce and ciphertext (`data`), and the id of the key that sealed it."""

    key_id: str
    data: bytes = field(repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Secret:
    """A named secret; `version` grows each time its value is set."""

    audited: ClassVar[Audited] = Audited("secret", ignored=frozenset({"last_accessed_at"}), renamed={"sealed": "value"})
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    description: str | None
    version: int
    sealed: SealedValue
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SecretAccess:
    """One read of a secret's value for a lease: which worker, when, for which execution."""

    id: str
    organization_id: str
    secret_id: str
    execution_id: str
    worker_id: str
    accessed_at: datetime

    @property
    def created_at(self) -> datetime:
        return self.accessed_at


def associated_data(organization_id: str, secret_id: str) -> bytes:
    """What a sealed value is bound to: a value copied onto another secret's row does not open."""
    return json.dumps([organization_id, secret_id]).encode()


class SecretsKeyMissing(Unavailable):
    """No encryption key is configured: values can be neither written nor read (503)."""

    code = "SECRETS_KEY_MISSING"

    def __init__(self) -> None:
        super().__init__(
            "no secrets encryption key is configured (CONTROLPLANE_SECRETS_KEY): secret values can be neither "
            "written nor read"
        )


class SecretUnreadable(Unavailable):
    """A stored value does not open with the configured key (another key sealed it, or the row was altered)."""

    code = "SECRET_UNREADABLE"
