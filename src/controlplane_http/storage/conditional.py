"""Conditional and partial downloads (RFC 9110): the ETag, `If-None-Match`, `Range` and `If-Range`."""

from __future__ import annotations

import re

from controlplane_domain.storage.entity import ByteRange

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


class Unsatisfiable(Exception):
    """The Range asks only for bytes past the end (416)."""


def etag(sha256: str) -> str:
    """A file's strong entity tag: its SHA-256, quoted."""
    return f'"{sha256}"'


def _tags(header: str) -> list[str]:
    return [tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()]


def none_match(header: str | None, tag: str) -> bool:
    """Whether `If-None-Match` names the file's version (or `*`): then a GET or HEAD is 304. The comparison is weak,
    as the RFC asks of If-None-Match."""
    if header is None:
        return False
    tags = _tags(header)
    return "*" in tags or tag in tags


def wanted_range(header: str | None, if_range: str | None, tag: str, size: int) -> ByteRange | None:
    """The one range `Range` asks for, or None for the whole file (no header, one this server ignores as the RFC
    allows (several ranges, another unit, bad syntax), or an `If-Range` of another version). Unsatisfiable when
    the range starts past the end (or the file is empty)."""
    if header is None:
        return None
    if if_range is not None and if_range.strip() != tag:  # a date, a weak or another tag: the whole file
        return None
    match = _RANGE.fullmatch(header.strip().replace(" ", ""))
    if match is None:
        return None
    first, last = match.groups()
    if not first:
        if not last:
            return None
        suffix = int(last)  # the last N bytes
        if suffix == 0 or size == 0:
            raise Unsatisfiable()
        return ByteRange(max(0, size - suffix), size)
    start = int(first)
    if last and int(last) < start:
        return None  # invalid: ignored
    if start >= size:
        raise Unsatisfiable()
    stop = size if not last else min(int(last) + 1, size)
    return ByteRange(start, stop)
