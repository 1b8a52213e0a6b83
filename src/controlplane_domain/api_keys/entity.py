"""API keys: shown once as `cpk_<key id>_<secret>`, stored as a hash, revocable."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from controlplane_domain.principal import Role

KEY_PREFIX = "cpk_"
MAX_BINDINGS = 100  # environments, and queues, a worker key may be bound to


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiKey:
    """A stored key: everything but the secret, of which only a hash is kept."""

    id: str
    organization_id: str
    name: str
    role: Role
    secret_hash: str
    created_by: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None = None
    # A worker key's bindings (empty for every other key): it works only on these queues and the queues of these
    # environments; unbound, on any queue of its organization.
    environment_ids: tuple[str, ...] = ()
    queue_ids: tuple[str, ...] = ()

    def is_usable(self, now: datetime) -> bool:
        return self.revoked_at is None and (self.expires_at is None or now < self.expires_at)


def format_key(key_id: str, secret: str) -> str:
    return f"{KEY_PREFIX}{key_id}_{secret}"


def parse_key(token: str) -> tuple[str, str] | None:
    """(key id, secret) of a well-formed key, None otherwise; key ids are hex, so the first `_` splits."""
    if not token.startswith(KEY_PREFIX):
        return None
    key_id, separator, secret = token[len(KEY_PREFIX) :].partition("_")
    if not separator or not key_id or not secret or not all(c in "0123456789abcdef" for c in key_id):
        return None
    return key_id, secret
