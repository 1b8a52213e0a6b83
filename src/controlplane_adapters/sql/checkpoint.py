"""SQLite WAL checkpoints in a thread of their own, so that the event loop's commits never run one.

With the default `wal_autocheckpoint`, the commit that takes the write-ahead log past 1,000 pages copies the
whole log into the database file and syncs it, in the event loop's thread, while every request waits; on the
execution round trip that doubled the average cost of a commit (see docs/benchmarks.md). The service turns
automatic checkpoints off on its own connections and runs this instead: a PASSIVE checkpoint every
`interval_seconds` (it never blocks a reader or the writer, and SQLite releases the GIL while it copies pages),
and a RESTART checkpoint when the log passes `restart_pages` anyway, so that it cannot grow without bound under
continuous writes."""

from __future__ import annotations

import logging
import sqlite3
import threading

log = logging.getLogger(__name__)

DEFAULT_INTERVAL_SECONDS = 0.25
DEFAULT_RESTART_PAGES = 4_096  # 16 MB of 4 KB pages
BUSY_TIMEOUT_MS = 50  # a RESTART waits this long for the writer, then tries again next time


class WalCheckpointer:
    """Checkpoints the SQLite database at `path` from a daemon thread between `start()` and `stop()`."""

    def __init__(
        self,
        path: str,
        *,
        interval_seconds: float = DEFAULT_INTERVAL_SECONDS,
        restart_pages: int = DEFAULT_RESTART_PAGES,
    ) -> None:
        self.path = path
        self.interval_seconds = interval_seconds
        self.restart_pages = restart_pages
        self.checkpoints = 0
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="sqlite-checkpointer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread after a last checkpoint (the log is left empty when nothing else uses the file)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stopping.set()
            thread.join()

    def _run(self) -> None:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            while not self._stopping.wait(self.interval_seconds):
                self._checkpoint(connection, "PASSIVE")
            self._checkpoint(connection, "TRUNCATE")
        finally:
            connection.close()

    def _checkpoint(self, connection: sqlite3.Connection, mode: str) -> None:
        try:
            _busy, pages, _copied = connection.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
            self.checkpoints += 1
            if mode == "PASSIVE" and pages > self.restart_pages:
                connection.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
                self.checkpoints += 1
        except sqlite3.Error:  # the file is busy or away; the next round tries again
            log.warning("SQLite checkpoint (%s) failed", mode, exc_info=True)
