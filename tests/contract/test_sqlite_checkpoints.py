"""SQLite checkpoints run in their own thread: the service's connections never checkpoint on commit, the log
is copied into the database file in the background, bounded under continuous writes, and emptied at stop."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlalchemy as sa

from controlplane_adapters.sql.checkpoint import WalCheckpointer
from controlplane_adapters.sql.engine import create_sqlite_engine
from tests.support import wait_until

ROW = "x" * 2000  # about half a page: every transaction adds two pages to the log (a leaf and the root)
WRITTEN = 5000 * 2 * 4096  # 5,000 transactions: the log's size if nothing checkpointed it


def database(tmp_path: Path) -> tuple[sa.Engine, Path]:
    path = tmp_path / "wal.db"
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{path}", autocheckpoint=False)
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    return engine, path


def write(engine: sa.Engine, transactions: int) -> None:
    with engine.connect() as connection:
        for _ in range(transactions):
            connection.exec_driver_sql("INSERT INTO t (v) VALUES (?)", (ROW,))
            connection.commit()


def sizes(path: Path) -> tuple[int, int]:
    """(bytes of the database file, bytes of its write-ahead log)."""
    return path.stat().st_size, Path(f"{path}-wal").stat().st_size


def test_the_service_connections_leave_checkpoints_to_the_checkpointer(tmp_path: Path) -> None:
    engine, path = database(tmp_path)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 0
    write(engine, 1500)  # past the 1,000 pages at which a commit would checkpoint by default
    before, log = sizes(path)
    assert log > 1500 * 4096
    assert before < 100 * 4096, "no commit copied the log into the database file"
    checkpointer = WalCheckpointer(str(path), interval_seconds=0.01)
    checkpointer.start()
    try:
        wait_until(lambda: sizes(path)[0] > 1500 * 2000)
    finally:
        checkpointer.stop()
    assert sizes(path)[1] == 0, "the last checkpoint empties the log"
    with sqlite3.connect(path) as reader:
        assert reader.execute("SELECT count(*) FROM t").fetchone() == (1500,)
    engine.dispose()


def test_the_log_is_reused_once_copied_when_writes_pause(tmp_path: Path) -> None:
    engine, path = database(tmp_path)
    checkpointer = WalCheckpointer(str(path), interval_seconds=0.005)
    checkpointer.start()
    largest = 0
    try:
        for _ in range(20):
            write(engine, 250)
            largest = max(largest, sizes(path)[1])
            seen = checkpointer.checkpoints
            wait_until(lambda seen=seen: checkpointer.checkpoints >= seen + 2)  # a pause in the writes
    finally:
        checkpointer.stop()
    assert largest < WRITTEN / 2, f"the log grew to {largest} bytes of the {WRITTEN} written"
    engine.dispose()


def test_the_log_stays_bounded_when_writes_never_pause(tmp_path: Path) -> None:
    """Like the service under load: a write, some reads, the next write; never a moment with nothing to do."""
    engine, path = database(tmp_path)
    checkpointer = WalCheckpointer(str(path), interval_seconds=0.005, restart_pages=200)
    checkpointer.start()
    largest = 0
    try:
        with engine.connect() as connection:
            for number in range(1, 5001):
                connection.exec_driver_sql("INSERT INTO t (v) VALUES (?)", (ROW,))
                connection.commit()
                for _ in range(20):
                    connection.exec_driver_sql("SELECT v FROM t WHERE id = ?", (number,)).scalar()
                connection.rollback()
                if number % 250 == 0:
                    largest = max(largest, sizes(path)[1])
    finally:
        checkpointer.stop()
    assert largest < WRITTEN / 2, f"the log grew to {largest} bytes of the {WRITTEN} written"
    engine.dispose()
