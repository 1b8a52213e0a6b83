"""Credential verification: the service API key and HS256 JWTs (alg pinned, exp/sub/org_id required)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from datetime import datetime

from controlplane_adapters.settings.model import AuthSettings
from controlplane_domain.api_keys.entity import KEY_PREFIX
from controlplane_domain.api_keys.usecases import REVOCATIONS, authenticate_api_key, verify_api_key
from controlplane_domain.errors import Unauthenticated
from controlplane_domain.ports import Ports
from controlplane_domain.principal import ROLE_RANK, Principal, Role, is_identity

log = logging.getLogger(__name__)

MAX_CACHED_KEYS = 10_000
MAX_TOKEN_LENGTH = 8192  # longer bearer tokens are refused unread (no signature check, no JSON parse)


def looks_like_jwt(token: str) -> bool:
    """A token with two dots is a JWT; anything else is an API key."""
    return token.count(".") == 2


_LADDER = frozenset(role.value for role in ROLE_RANK)  # the roles a JWT may claim


def _role_from_claims(claims: dict[str, object]) -> Role:
    """Highest recognised role in `roles` (list or string); absent means member, unrecognised means viewer.

    Only the ladder's roles are recognised: `worker` is a kind of API key, never a user's claim."""
    raw = claims.get("roles", claims.get("role"))
    if raw is None:
        return Role.MEMBER
    names = [raw] if isinstance(raw, str) else list(raw) if isinstance(raw, list) else []
    known = [Role(name) for name in names if isinstance(name, str) and name in _LADDER]
    return max(known, key=ROLE_RANK.__getitem__) if known else Role.VIEWER


MAX_CACHED_TOKENS = 10_000
TOKEN_CACHE_SECONDS = 60.0


class JwtVerifier:
    """Verifies HS256 JWTs signed with the configured secret.

    A verified token is remembered (by its full text, signature included) until it expires or for a minute,
    whichever comes first: decoding and checking a token costs more than the rest of authentication, a dashboard
    sends the same one with every request, and a JWT cannot be revoked before its expiry anyway."""

    def __init__(self, settings: AuthSettings) -> None:
        self._settings = settings
        self._verified: dict[str, tuple[float, Principal]] = {}

    async def verify(self, token: str) -> Principal:
        now = time.time()
        cached = self._verified.get(token)
        if cached is not None:
            if now < cached[0]:
                return cached[1]
            del self._verified[token]
        principal, expires_at = self._decode(token)
        if len(self._verified) >= MAX_CACHED_TOKENS:
            del self._verified[next(iter(self._verified))]  # the oldest entry
        valid_until = min(expires_at + self._settings.jwt_leeway_seconds, now + TOKEN_CACHE_SECONDS)
        self._verified[token] = (valid_until, principal)
        return principal

    def _decode(self, token: str) -> tuple[Principal, float]:
        settings = self._settings
        if not settings.jwt_secret:
            raise Unauthenticated()
        import jwt  # (pyjwt loads `cryptography`: with the first JWT, not at start: docs/benchmarks.md, "Idle memory")

        try:
            claims = jwt.decode(
                token,
                settings.jwt_secret,
                algorithms=[settings.jwt_algorithm],
                audience=settings.jwt_audience,
                issuer=settings.jwt_issuer,
                leeway=settings.jwt_leeway_seconds,
                options={
                    "require": ["exp", "sub"],
                    "verify_aud": settings.jwt_audience is not None,
                    "verify_iss": settings.jwt_issuer is not None,
                },
            )
        except jwt.PyJWTError as exc:
            log.info("JWT rejected: %s", exc)
            raise Unauthenticated() from exc
        organization = claims.get("org_id")
        subject = claims.get("sub")
        if not is_identity(organization) or not is_identity(subject):  # the same shape on every store
            log.info("JWT rejected: org_id or sub is not 1 to 255 printable ASCII characters")
            raise Unauthenticated()
        try:
            expires = float(claims["exp"])  # pyjwt checked it is a number; one too large for a float is no time
        except (OverflowError, ValueError, TypeError) as exc:
            raise Unauthenticated() from exc
        # The credential (the rate-limit bucket) names the organization with its length: "a" and "b:c" can never
        # share one with "a:b" and "c".
        credential = f"jwt:{len(organization)}:{organization}:{subject}"
        return Principal(organization, subject, _role_from_claims(claims), "jwt", credential), expires


class ServiceKeyVerifier:
    """Accepts `SERVICE_API_KEY` as an admin key of the default organization."""

    def __init__(self, service_api_key: str | None, organization_id: str) -> None:
        self._key = service_api_key.encode() if service_api_key else None
        self._principal = Principal(organization_id, "service", Role.ADMIN, "api_key", "service-api-key", operator=True)

    async def verify(self, token: str) -> Principal:
        if self._key is None or not hmac.compare_digest(token.encode(), self._key):
            raise Unauthenticated()
        return self._principal


class Sha256SecretHasher:
    """Hashes API key secrets with SHA-256.

    The secrets are 256 random bits (not passwords), so a fast hash loses nothing to brute force and keeps
    authentication cheap; comparison is constant-time.
    """

    def hash(self, secret: str) -> str:
        return hashlib.sha256(secret.encode()).hexdigest()

    def verify(self, secret: str, hashed: str) -> bool:
        return hmac.compare_digest(self.hash(secret), hashed)

    def new_secret(self) -> str:
        return secrets.token_urlsafe(32)

    def new_key_id(self) -> str:
        return secrets.token_hex(12)


class StoredKeyVerifier:
    """Verifies `cpk_...` keys against the store, remembering good ones for `cache_seconds`.

    Any revocation, on this node or another (through the event bus), empties the cache before the next
    request is verified, so a revoked key is refused from the next request on. A verification whose read was in
    flight when a revocation arrived answers with what it read (the request began before the revocation) but
    does not cache it: its read may predate the revocation (`_generation` counts the revocations seen)."""

    def __init__(self, ports: Ports, hasher: Sha256SecretHasher, cache_seconds: float = 30.0) -> None:
        self._ports = ports
        self._hasher = hasher
        self._cache_seconds = cache_seconds
        self._cache: dict[str, tuple[Principal, datetime | None, float]] = {}
        self._revocations = ports.bus.subscribe(REVOCATIONS) if ports.bus is not None and cache_seconds > 0 else None
        self._generation = 0

    def _forget_if_revoked(self) -> None:
        assert self._revocations is not None
        if self._revocations.take():
            self._cache.clear()
            self._generation += 1

    async def verify(self, token: str) -> Principal:
        if self._revocations is None:
            return await authenticate_api_key(self._ports, self._hasher, token)
        self._forget_if_revoked()
        digest = hashlib.sha256(token.encode()).hexdigest()
        cached = self._cache.get(digest)
        if cached is not None:
            principal, expires_at, fresh_until = cached
            if time.monotonic() < fresh_until and (expires_at is None or self._ports.clock.now() < expires_at):
                return principal
            del self._cache[digest]
        generation = self._generation
        principal, expires_at = await verify_api_key(self._ports, self._hasher, token)
        self._forget_if_revoked()
        if generation != self._generation:  # a revocation arrived while the key was read: the read may be stale
            return principal
        if len(self._cache) >= MAX_CACHED_KEYS:
            self._cache.clear()
        self._cache[digest] = (principal, expires_at, time.monotonic() + self._cache_seconds)
        return principal


class CredentialVerifier:
    """Routes a bearer token to the JWT, service-key or stored-key verifier, honouring the enabled methods."""

    def __init__(
        self, settings: AuthSettings, service_key: ServiceKeyVerifier, stored_keys: StoredKeyVerifier | None = None
    ) -> None:
        self._settings = settings
        self._jwt = JwtVerifier(settings)
        self._service_key = service_key
        self._stored_keys = stored_keys

    async def verify(self, token: str) -> Principal:
        if len(token) > MAX_TOKEN_LENGTH:
            raise Unauthenticated()
        if looks_like_jwt(token):
            if "jwt" not in self._settings.methods:
                raise Unauthenticated()
            return await self._jwt.verify(token)
        if "api_key" not in self._settings.methods:
            raise Unauthenticated()
        if token.startswith(KEY_PREFIX) and self._stored_keys is not None:
            return await self._stored_keys.verify(token)
        return await self._service_key.verify(token)
