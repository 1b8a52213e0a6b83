"""The audit context: who is acting, from where, in which request; set once per request by whoever serves it (the
HTTP layer), read by whatever records an audit event in that request (`changes.py`, `usecases.record`).

A contextvar, so that a change made anywhere under a request (a use case, the generic repositories) is attributed
without passing the caller through every signature. Where no context is set (background work: the scheduler, the
lease reaper, the heartbeat flusher; the fast lane's hot routes), nothing is recorded: those are not changes a
person made to the configuration."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass, replace
from datetime import datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditContext:
    """Who (`actor_subject`; `actor_kind`: how it authenticated, api_key, jwt, none or cli; its role and
    credential), from where (`client_ip`, `user_agent`), which request, and the clock and ids that stamp events.
    `generic`: whether the generic repositories record their writes (a use case that records its own, more
    telling, event turns it off around its writes: `explicitly`)."""

    actor_subject: str
    actor_kind: str
    actor_role: str
    credential_id: str | None = None
    client_ip: str | None = None
    user_agent: str | None = None
    request_id: str | None = None
    now: Callable[[], datetime]
    new_id: Callable[[], str]
    generic: bool = True


_CURRENT: ContextVar[AuditContext | None] = ContextVar("controlplane_audit_context", default=None)


def current() -> AuditContext | None:
    """The context of the request being served, or None."""
    return _CURRENT.get()


def enter(context: AuditContext) -> Token[AuditContext | None]:
    """Make `context` current (until `leave` with the token)."""
    return _CURRENT.set(context)


def leave(token: Token[AuditContext | None]) -> None:
    _CURRENT.reset(token)


@contextmanager
def acting(context: AuditContext) -> Iterator[AuditContext]:
    """`context` is current inside the block (a command-line tool, a test)."""
    token = enter(context)
    try:
        yield context
    finally:
        leave(token)


@contextmanager
def explicitly() -> Iterator[AuditContext | None]:
    """Inside the block the generic repositories record nothing: the caller records its own events."""
    context = current()
    if context is None or not context.generic:
        yield context
        return
    token = enter(replace(context, generic=False))
    try:
        yield context
    finally:
        leave(token)
