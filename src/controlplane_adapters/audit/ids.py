"""Time-ordered ids for audit events (UUID version 7, RFC 9562): the log's order, newest first by time then id, is
the order events were made in even when a clock gives two of them the same time (a process makes its ids strictly
increasing)."""

from __future__ import annotations

import os
import threading
import time
import uuid


class TimeOrderedIds:
    """UUIDv7 strings: 48 bits of Unix milliseconds, then a 12-bit counter for ids of the same millisecond (the
    clock stepping back reuses the last millisecond), then 62 random bits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = (0, 0)  # (milliseconds, counter)

    def new_id(self) -> str:
        with self._lock:
            millis = time.time_ns() // 1_000_000
            last_millis, counter = self._last
            if millis <= last_millis:
                millis, counter = last_millis, counter + 1
                if counter > 0xFFF:  # 4096 ids in one millisecond: borrow the next one
                    millis, counter = millis + 1, 0
            else:
                counter = 0
            self._last = (millis, counter)
        random = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
        value = (millis << 80) | (0x7 << 76) | (counter << 64) | (0b10 << 62) | random
        return str(uuid.UUID(int=value))


AUDIT_IDS = TimeOrderedIds()
