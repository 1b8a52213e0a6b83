"""A request's id and its audit context, read from the ASGI scope.

The request id lives in one place, the scope's state (`request_id(scope)`): the client's own `X-Request-ID` when
it sent a reasonable one, else a new UUID, made the first time anything asks for it. Whatever answers with the
header or logs the id reads it there too."""

from __future__ import annotations

import re
import uuid
from collections.abc import MutableMapping
from contextvars import Token
from typing import Any

from controlplane_adapters.audit.ids import AUDIT_IDS
from controlplane_domain.audit import context as audit
from controlplane_domain.ports import Ports
from controlplane_domain.principal import Principal
from controlplane_http.clients import client_address

Scope = MutableMapping[str, Any]

REQUEST_ID_STATE = "request_id"  # = operations/requests.REQUEST_ID_KEY: its middleware sets it first, on every request
REQUEST_ID_HEADER = b"x-request-id"
_ACCEPTED_ID = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")
USER_AGENT_MAX = 512
SUBJECT_MAX = 255


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def request_id(scope: Scope) -> str:
    """The request's id, kept in the scope's state: the client's `X-Request-ID` (1 to 128 characters of letters,
    digits and `._:@/+=-`), else a new UUID."""
    state = scope.setdefault("state", {})
    found = state.get(REQUEST_ID_STATE)
    if isinstance(found, str):
        return found
    given = _header(scope, REQUEST_ID_HEADER)
    made = given.strip() if given is not None and _ACCEPTED_ID.fullmatch(given.strip()) else str(uuid.uuid4())
    state[REQUEST_ID_STATE] = made
    return made


def audit_context(scope: Scope, principal: Principal, ports: Ports) -> audit.AuditContext:
    """Who (the authenticated principal), from where (the client's address, `clients.client_address`: the
    socket's peer unless it is a trusted proxy; and its user agent) and which request: what the audit log
    records of the changes this request makes."""
    client = client_address(scope)  # the security middleware's answer (trusted proxies considered)
    agent = _header(scope, b"user-agent")
    return audit.AuditContext(
        actor_subject=principal.subject[:SUBJECT_MAX],
        actor_kind=principal.method,
        actor_role=principal.role.value,
        credential_id=principal.credential_id[:SUBJECT_MAX],
        client_ip=client[:64] if client else None,
        user_agent=agent[:USER_AGENT_MAX] if agent else None,
        request_id=request_id(scope),
        now=ports.clock.now,
        new_id=AUDIT_IDS.new_id,  # time-ordered: the log's order among events of one time
    )


def enter_audit(scope: Scope, principal: Principal, ports: Ports) -> Token[audit.AuditContext | None]:
    """Make this request's audit context current (`audit.leave(token)` when the request is answered)."""
    return audit.enter(audit_context(scope, principal, ports))
