"""The HTTP side of Idempotency-Key: the use cases bound to the app's ports, and the middleware that replays."""

from __future__ import annotations

import hashlib

from controlplane_domain.errors import Conflict, ValidationFailed
from controlplane_domain.idempotency.usecases import (
    Replay,
    Reservation,
    begin_idempotent_request,
    finish_idempotent_request,
)
from controlplane_domain.ports import Ports
from controlplane_domain.principal import Principal
from controlplane_http.errors import envelope, validation_body
from controlplane_http.middleware import ASGIApp, Message, Receive, Scope, Send, header, send_json

__all__ = ["Idempotency", "IdempotencyMiddleware", "Replay", "Reservation"]


class Idempotency:
    def __init__(self, ports: Ports) -> None:
        self.ports = ports

    async def begin(self, organization_id: str, key: str, fingerprint: str) -> Replay | Reservation:
        return await begin_idempotent_request(self.ports, organization_id, key, fingerprint)

    def fingerprint(self, method: str, path: str, body: bytes) -> str:
        """What tells a repeated request from another one. A body that carries a secret's value is digested with
        a key (HMAC, `SecretCipher.fingerprint`): a plain SHA-256 stored with the record would let whoever reads
        the database test guesses of a weak value."""
        message = b"%s %s\n%s" % (method.encode(), path.encode(), body)
        cipher = self.ports.secrets_cipher
        if path.startswith(SECRET_PATHS) and cipher is not None:
            return cipher.fingerprint(message)
        return hashlib.sha256(message).hexdigest()

    async def finish(
        self, organization_id: str, key: str, reservation: Reservation, status: int, content_type: str, body: bytes
    ) -> None:
        await finish_idempotent_request(self.ports, organization_id, key, reservation, status, content_type, body)


# Creating POSTs whose answer must never be stored: a new API key's secret is shown once, and kept only hashed.
UNRECORDED_PATHS = frozenset({"/api/v1/api-keys"})
# Path prefixes of bodies that carry secret values: a secret's value, an integration's secret fields.
SECRET_PATHS = ("/api/v1/secrets", "/api/v1/integrations")


class IdempotencyMiddleware:
    """Replays the first response to a creating POST that carries the same `Idempotency-Key` and body (but for
    `UNRECORDED_PATHS`, where the header is ignored)."""

    def __init__(self, app: ASGIApp, idempotency: Idempotency, max_body_bytes: int) -> None:
        self.app = app
        self.idempotency = idempotency
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        recorded = scope["type"] == "http" and scope["method"] == "POST" and scope["path"] not in UNRECORDED_PATHS
        key = header(scope, b"idempotency-key") if recorded else None
        principal = scope.get("user")
        if key is None or not isinstance(principal, Principal):
            await self.app(scope, receive, send)
            return
        body = await self._read_body(receive)
        if body is None:
            await send_json(send, 413, envelope(413, "PAYLOAD_TOO_LARGE", "request body too large"))
            return
        fingerprint = self.idempotency.fingerprint(scope["method"], scope["path"], body)
        try:
            replay = await self.idempotency.begin(principal.organization_id, key, fingerprint)
        except ValidationFailed as exc:
            await send_json(send, 422, validation_body([exc.location, exc.field], exc.issue))
            return
        except Conflict as exc:
            await send_json(send, 409, envelope(409, "IDEMPOTENCY_IN_FLIGHT", exc.message))
            return
        if isinstance(replay, Replay):
            await self._replay(send, replay)
            return
        await self._run_and_record(scope, body, send, principal.organization_id, key, replay)

    async def _read_body(self, receive: Receive) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _replay(self, send: Send, replay: Replay) -> None:
        headers = [(b"content-type", replay.content_type.encode()), (b"idempotent-replayed", b"true")]
        headers.append((b"content-length", str(len(replay.body)).encode()))
        await send({"type": "http.response.start", "status": replay.status_code, "headers": headers})
        await send({"type": "http.response.body", "body": replay.body})

    async def _run_and_record(
        self, scope: Scope, body: bytes, send: Send, organization_id: str, key: str, reservation: Reservation
    ) -> None:
        delivered = False

        async def replay_body() -> Message:
            nonlocal delivered
            if delivered:
                return {"type": "http.disconnect"}
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        status = 500
        content_type = "application/json"
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal status, content_type
            if message["type"] == "http.response.start":
                status = message["status"]
                for name, value in message.get("headers", []):
                    if name.lower() == b"content-type":
                        content_type = value.decode("latin-1")
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, replay_body, capture)
        finally:
            await self.idempotency.finish(organization_id, key, reservation, status, content_type, b"".join(chunks))
