"""What the secrets area needs: a store for secrets and their accesses, and a cipher."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from controlplane_domain.paging import PageRequest
from controlplane_domain.repository import Repository
from controlplane_domain.secrets.entity import Secret, SecretAccess


class SecretCipher(Protocol):
    """Seals and opens values with one key (AES-256-GCM in the adapters)."""

    @property
    def key_id(self) -> str:
        """A short public id of the key (it reveals nothing of the key), stored with each sealed value."""

    def encrypt(self, plaintext: str, associated_data: bytes) -> bytes:
        """The sealed value (a fresh nonce each time), bound to `associated_data`."""

    def decrypt(self, data: bytes, associated_data: bytes) -> str:
        """The plaintext; SecretUnreadable when `data` was not sealed by this key with this associated data."""

    def fingerprint(self, data: bytes) -> str:
        """A keyed digest of `data` (HMAC): matches a repeated request without letting anyone guess its content."""


class SecretRepository(Repository[Secret], Protocol):
    async def add(self, secret: Secret) -> None:
        """Store a new secret; Conflict when its name is taken in the organization."""

    async def update(self, secret: Secret) -> None:
        """Replace a stored secret; Conflict when its new name is taken."""

    async def delete(self, organization_id: str, secret_id: str) -> None:
        """Delete the secret and its recorded accesses."""

    async def get_by_names(
        self, organization_id: str, names: Sequence[str], *, for_update: bool = False
    ) -> list[Secret]:
        """The organization's secrets with these names (those that exist)."""

    async def add_accesses(self, accesses: Sequence[SecretAccess]) -> None: ...

    async def access_page(
        self, organization_id: str, secret_id: str, page: PageRequest
    ) -> tuple[list[SecretAccess], int]:
        """A page of the secret's accesses, oldest first ((accessed_at, id) order), and their total."""

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Secret]:
        """Operator only, across every organization: up to `limit` secrets not sealed by the key `key_id`."""
