"""Storage wire types (a file's bytes travel raw: only its metadata is JSON)."""

from __future__ import annotations

from datetime import datetime

import msgspec

from controlplane_wire.base import Page


class StoredFile(msgspec.Struct, kw_only=True):
    path: str
    size: int
    content_type: str
    sha256: str
    created_at: datetime
    updated_at: datetime


class StoredFileList(Page[StoredFile]):
    items: list[StoredFile]


class StorageUsage(msgspec.Struct, kw_only=True):
    files: int
    bytes_used: int
    quota_bytes: int
