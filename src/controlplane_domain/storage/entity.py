"""Storage: an organization's files (their metadata; the bytes live in a `BlobStore`), the rules of their paths
and media types, the quota and the byte ranges a download may ask for."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.errors import DomainError, ValidationFailed

MAX_PATH_BYTES = 1024
"""A path's length in UTF-8 (S3's own limit on a key; ours are opaque, but a path should fit anywhere)."""
MAX_SEGMENT_BYTES = 255
MAX_CONTENT_TYPE = 255
DEFAULT_CONTENT_TYPE = "application/octet-stream"
# type "/" subtype, then parameters: what RFC 9110 calls a media type, in visible ASCII.
_MEDIA_TYPE = re.compile(r"[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(\s*;\s*[\x21-\x7e][\x20-\x7e]*)?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class QuotaExceeded(DomainError):
    """The upload would take the organization past its storage quota: 413, and nothing is kept."""

    code = "QUOTA_EXCEEDED"

    def __init__(self, quota_bytes: int, used_bytes: int) -> None:
        super().__init__(
            f"the upload would exceed the organization's storage quota of {quota_bytes} bytes",
            {"quota_bytes": quota_bytes, "bytes_used": used_bytes},
        )


class UploadInterrupted(DomainError):
    """The client went away before its body ended: nothing is kept (answered 400, to no one)."""

    code = "UPLOAD_INTERRUPTED"

    def __init__(self) -> None:
        super().__init__("the request body ended before it was complete; nothing was stored")


class BlobMissing(Exception):
    """A backend holds no object under the key (deleted or replaced since its row was read)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredFile:
    """A file of an organization: its path (unique in the organization), size, media type, SHA-256 (hex), and the
    key of its bytes in the blob store (a fresh key for every upload: see docs/storage.md)."""

    audited: ClassVar[Audited] = Audited("stored_file", ignored=frozenset({"blob_key"}))
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    path: str
    size: int
    content_type: str
    sha256: str
    blob_key: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Usage:
    """How many files an organization keeps and their bytes."""

    files: int = 0
    bytes_used: int = 0


@dataclass(frozen=True, slots=True)
class StorageUsage:
    files: int
    bytes_used: int
    quota_bytes: int


@dataclass(frozen=True, slots=True)
class ByteRange:
    """Bytes `start` to `stop` (exclusive) of an object."""

    start: int
    stop: int

    @property
    def length(self) -> int:
        return self.stop - self.start


def normalise_path(raw: str) -> str:
    """The path a file is kept under: Unicode NFC, `.` segments dropped; `..`, NUL and other control characters,
    backslashes, empty segments (`a//b`, a trailing `/`) and absolute paths are refused (ValidationFailed)."""

    def refuse(issue: str) -> ValidationFailed:
        return ValidationFailed("path", issue, "path")

    path = unicodedata.normalize("NFC", raw)
    if not path:
        raise refuse("must not be empty")
    if _CONTROL.search(path):
        raise refuse("must not contain NUL or other control characters")
    if "\\" in path:
        raise refuse("must not contain backslashes (the separator is '/')")
    if path.startswith("/"):
        raise refuse("must be relative (no leading '/')")
    segments = [segment for segment in path.split("/") if segment != "."]
    if any(segment == ".." for segment in segments):
        raise refuse("must not contain '..' segments")
    if not segments or any(segment == "" for segment in segments):
        raise refuse("must not contain empty segments ('//' or a trailing '/')")
    if any(len(segment.encode()) > MAX_SEGMENT_BYTES for segment in segments):
        raise refuse(f"each segment must be at most {MAX_SEGMENT_BYTES} bytes (UTF-8)")
    normal = "/".join(segments)
    if len(normal.encode()) > MAX_PATH_BYTES:
        raise refuse(f"must be at most {MAX_PATH_BYTES} bytes (UTF-8)")
    return normal


def check_content_type(value: str | None) -> str:
    """The media type a file is kept with (the request's Content-Type, or application/octet-stream)."""
    if value is None or not value.strip():
        return DEFAULT_CONTENT_TYPE
    text = value.strip()
    if len(text) > MAX_CONTENT_TYPE or _MEDIA_TYPE.fullmatch(text) is None:
        raise ValidationFailed("content-type", f"must be a media type (type/subtype), at most {MAX_CONTENT_TYPE}"
                               " characters", "header")  # fmt: skip
    return text


def blob_key(new_id: str) -> str:
    """Where an upload's bytes go: a key of its own (never a path, never reused), spread over 256 prefixes."""
    name = new_id.lower().replace("-", "")
    return f"{name[:2]}/{name}"
