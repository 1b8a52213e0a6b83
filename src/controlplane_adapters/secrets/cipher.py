"""AES-256-GCM sealing of secret values (the `cryptography` package), and the key's text form."""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import os
from typing import TYPE_CHECKING

from controlplane_adapters.settings.model import ConfigError
from controlplane_domain.secrets.entity import SecretUnreadable

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY_BYTES = 32
NONCE_BYTES = 12  # 96 bits, random for every value sealed
HOW_TO_MAKE_ONE = "python -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())'"


class BadKey(ConfigError):
    """A key's text is not 32 bytes in base64 (the message never quotes the text)."""


def parse_key(text: str, source: str) -> bytes:
    """The 32 bytes a key's base64 text stands for; BadKey naming `source` otherwise."""
    try:
        key = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise BadKey(f"{source} is not valid base64 (make a key with: {HOW_TO_MAKE_ONE})") from None
    if len(key) != KEY_BYTES:
        raise BadKey(f"{source} must be {KEY_BYTES} bytes in base64, got {len(key)} (make one with: {HOW_TO_MAKE_ONE})")
    return key


def new_key_text() -> str:
    return base64.b64encode(os.urandom(KEY_BYTES)).decode()


def key_id_of(key: bytes) -> str:
    """The first 8 hex digits of the key's SHA-256: tells keys apart, reveals nothing of them."""
    return hashlib.sha256(key).hexdigest()[:8]


class AesGcmCipher:
    """The domain's SecretCipher: `nonce || ciphertext+tag`, the associated data authenticated with it."""

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise BadKey(f"an AES-256 key is {KEY_BYTES} bytes")
        self._key = key
        self._key_id = key_id_of(key)
        self._mac_key = hashlib.sha256(b"controlplane fingerprint\x00" + key).digest()

    def __repr__(self) -> str:
        return f"AesGcmCipher(key_id={self._key_id!r})"

    @property
    def key_id(self) -> str:
        return self._key_id

    @functools.cached_property
    def _aead(self) -> AESGCM:
        """`cryptography`'s AES-GCM, loaded with the first secret sealed or opened, not at start (its import is
        several MB of the server's idle memory: docs/benchmarks.md, "Idle memory")."""
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        return AESGCM(self._key)

    def encrypt(self, plaintext: str, associated_data: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plaintext.encode(), associated_data)

    def decrypt(self, data: bytes, associated_data: bytes) -> str:
        from cryptography.exceptions import InvalidTag

        try:
            return self._aead.decrypt(data[:NONCE_BYTES], data[NONCE_BYTES:], associated_data).decode()
        except (InvalidTag, ValueError, UnicodeDecodeError):
            raise SecretUnreadable("a stored secret value does not open with the configured key") from None

    def fingerprint(self, data: bytes) -> str:
        return hmac.new(self._mac_key, data, hashlib.sha256).hexdigest()
