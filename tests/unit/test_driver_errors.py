"""Driver errors become domain errors; transient ones are retried with a fresh transaction."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from controlplane_adapters.sql.errors import translate_driver_error
from controlplane_domain.errors import Conflict, TransientFailure, Unavailable
from controlplane_domain.retry import MAX_ATTEMPTS, retry_transient


class DriverError(Exception):
    def __init__(self, message: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (DBAPIError("UPDATE", {}, DriverError("deadlock detected", "40P01")), TransientFailure),
        (DBAPIError("UPDATE", {}, DriverError("could not serialize", "40001")), TransientFailure),
        (OperationalError("BEGIN", {}, DriverError("database is locked")), TransientFailure),
        (IntegrityError("INSERT", {}, DriverError("duplicate key", "23505")), Conflict),
        (OperationalError("SELECT", {}, DriverError("connection refused")), Unavailable),
        (ConnectionResetError("peer reset"), Unavailable),
    ],
)
def test_translation(error: BaseException, expected: type[Exception]) -> None:
    assert isinstance(translate_driver_error(error), expected)


def test_programming_errors_are_not_disguised() -> None:
    assert translate_driver_error(ValueError("bug")) is None
    assert translate_driver_error(DBAPIError("SELECT", {}, DriverError("syntax error", "42601"))) is None


async def test_transient_failures_are_retried_until_success() -> None:
    attempts: list[int] = []

    @retry_transient
    async def flaky(succeed_on: int) -> str:
        attempts.append(len(attempts) + 1)
        if len(attempts) < succeed_on:
            raise TransientFailure("deadlock")
        return "done"

    assert await flaky(3) == "done"
    assert attempts == [1, 2, 3]


async def test_retries_give_up_after_the_limit() -> None:
    attempts: list[int] = []

    @retry_transient
    async def hopeless() -> None:
        attempts.append(1)
        raise TransientFailure("deadlock")

    with pytest.raises(TransientFailure):
        await hopeless()
    assert len(attempts) == MAX_ATTEMPTS


async def test_other_errors_are_not_retried() -> None:
    attempts: list[int] = []

    @retry_transient
    async def conflicting() -> None:
        attempts.append(1)
        raise Conflict("duplicate")

    with pytest.raises(Conflict):
        await conflicting()
    assert attempts == [1]
