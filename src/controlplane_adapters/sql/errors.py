"""Driver errors as the domain errors a caller can act on."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, OperationalError

from controlplane_domain.errors import (
    Conflict,
    DomainError,
    StatementTimeout,
    TransientFailure,
    Unavailable,
    ValidationFailed,
)

TRANSIENT_SQLSTATES = frozenset({"40001", "40P01", "55P03"})  # serialization failure, deadlock, lock not available
QUERY_CANCELED = "57014"  # Postgres: statement_timeout (or a cancel)
TIMED_OUT = "the database statement ran past its time limit and was stopped"


class OverBudget(Exception):
    """A statement run with a time budget of its own (`execute_within`) ran past it and was stopped; the
    repository answers what its area's bound says (a walk: 422 naming `max_walk_ms`)."""


def _sqlstate(exc: DBAPIError) -> str | None:
    original = exc.orig
    code = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    return code if isinstance(code, str) else None


def canceled(exc: DBAPIError) -> bool:
    """Postgres stopped the statement (its statement_timeout, or a cancel)."""
    return _sqlstate(exc) == QUERY_CANCELED


def _timed_out(exc: DBAPIError) -> bool:
    """Postgres's statement_timeout, or SQLite's progress handler (engine.DeadlineConnection) interrupting."""
    return _sqlstate(exc) == QUERY_CANCELED or getattr(exc.orig, "sqlite_errorname", None) == "SQLITE_INTERRUPT"


def translate_driver_error(exc: BaseException) -> DomainError | None:
    """Map a driver error to the domain error a caller can act on, or None to let it through."""
    if isinstance(exc, DBAPIError) and _timed_out(exc):
        return StatementTimeout(TIMED_OUT)
    if isinstance(exc, DBAPIError) and (_sqlstate(exc) in TRANSIENT_SQLSTATES or "database is locked" in str(exc.orig)):
        return TransientFailure("a concurrent change got in the way; please retry")
    if isinstance(exc, IntegrityError):
        return Conflict("the change conflicts with existing data")
    original = exc.orig if isinstance(exc, sa.exc.StatementError) else exc
    if isinstance(exc, DataError) or isinstance(original, OverflowError):  # OverflowError: SQLite's 64-bit integers
        return ValidationFailed("", "a value cannot be stored by the database")
    if isinstance(exc, OperationalError | OSError | ConnectionError) or (
        isinstance(exc, DBAPIError) and exc.connection_invalidated
    ):
        return Unavailable("the database is unavailable")
    return None
