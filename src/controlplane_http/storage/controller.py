"""Storage: files uploaded and downloaded as raw, streamed bodies; their list and the organization's usage.

The upload's handler takes the `request` (no `data`): Litestar reads nothing before it, the 415 for non-JSON
bodies does not apply (`body.foreign_media_type` looks for `data`), and its body size limit is lifted
(`request_max_body_size=None`): the quota bounds an upload, counted as it streams."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any
from urllib.parse import quote, unquote

import msgspec
from litestar import Controller, HttpMethod, Request, Response, delete, get, put, route
from litestar.exceptions import InternalServerException
from litestar.params import Parameter
from litestar.response.base import ASGIResponse
from litestar.response.streaming import ASGIStreamingResponse
from litestar.types import Scope

from controlplane_domain.errors import ValidationFailed
from controlplane_domain.ports import Ports
from controlplane_domain.storage import usecases
from controlplane_domain.storage.entity import MAX_PATH_BYTES, MAX_SEGMENT_BYTES, BlobMissing, UploadInterrupted
from controlplane_domain.storage.entity import StoredFile as DomainFile
from controlplane_http.area import HttpArea
from controlplane_http.crud import Listing, Resource, routes
from controlplane_http.errors import envelope
from controlplane_http.handlers import caller, errors
from controlplane_http.signatures import Query
from controlplane_http.storage.conditional import Unsatisfiable, etag, none_match, wanted_range
from controlplane_http.storage.openapi import FILE_RESPONSES, PUT_RESPONSES, DownloadOperation, UploadOperation
from controlplane_wire.base import to_wire
from controlplane_wire.storage import StorageUsage, StoredFile, StoredFileList

FILES = "/api/v1/storage/files/"
Prefix = Annotated[str, Parameter(description="only the files whose path starts with this text", max_length=1024)]


def file_out(stored: DomainFile) -> StoredFile:
    return to_wire(stored, StoredFile)


INLINE_TYPES = frozenset(
    {"text/plain", "application/json", "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"}
)
"""The media types a download may be shown inline: a browser renders them as inert text or pixels (with `nosniff`
it never reads them as anything else). Every other type (text/html, image/svg+xml, application/xml, JavaScript,
PDF, application/octet-stream, anything unknown) is answered as an attachment: saved, never rendered in the
service's origin, where a page could run script with the caller's session."""


def disposition(stored: DomainFile) -> str:
    """`inline` for the types in INLINE_TYPES, else `attachment`; with the file's last segment as its name
    (RFC 6266 `filename*`, percent-encoded UTF-8: no quote or line break reaches the header)."""
    essence = stored.content_type.split(";", 1)[0].strip().lower()
    kind = "inline" if essence in INLINE_TYPES else "attachment"
    return f"{kind}; filename*=UTF-8''{quote(stored.path.rsplit('/', 1)[-1], safe='')}"


def _headers(stored: DomainFile) -> dict[str, str]:
    return {
        "etag": etag(stored.sha256),
        "accept-ranges": "bytes",
        "last-modified": stored.updated_at.strftime("%a, %d %b %Y %H:%M:%S GMT"),
        "x-content-type-options": "nosniff",
        "content-disposition": disposition(stored),
        "content-security-policy": "default-src 'none'; sandbox",
    }


async def _body(request: Request[Any, Any, Any]) -> AsyncIterator[bytes]:
    """The request's body as it arrives; a client gone mid-body is UploadInterrupted."""
    try:
        async for chunk in request.stream():
            if chunk:
                yield chunk
    except InternalServerException as exc:  # Litestar's "client disconnected prematurely"
        raise UploadInterrupted() from exc


# The rules `normalise_path` checks, as a pattern (documented only: its checks say what is wrong): segments of no
# control character, backslash or '/', none of them '..', and '.' only where dropping it leaves no empty path or
# segment. Byte lengths (a segment, the path) are bounded in characters, which UTF-8 may exceed: the description
# gives them in bytes.
_CHARACTER = r"[^/\\\x00-\x1f\x7f]"
_FIRST = r"[^./\\\x00-\x1f\x7f]"
_MOST = MAX_SEGMENT_BYTES  # (in characters: never more than the bytes allowed, so never stricter than the rule)
_SEGMENT = "(?:{})".format(
    "|".join(
        (
            rf"{_FIRST}{_CHARACTER}{{0,{_MOST - 1}}}",
            rf"\.{_FIRST}{_CHARACTER}{{0,{_MOST - 2}}}",
            rf"\.\.{_CHARACTER}{{1,{_MOST - 2}}}",
        )
    )
)
FilePath = Annotated[
    str,
    Parameter(
        description=f"relative, '/'-separated; at most {MAX_PATH_BYTES} bytes (UTF-8), a segment at most "
        f"{MAX_SEGMENT_BYTES}; no '..' segment, backslash or control character",
        schema_extra={"pattern": rf"^(?:\./)*{_SEGMENT}(?:/(?:{_SEGMENT}|\.))*$", "maxLength": MAX_PATH_BYTES},
    ),
]


def _file_path(scope: Scope, routed: str) -> str:
    """The file's path as the client wrote it: from the raw request path (the router merges `//` and drops a trailing
    `/`, which would turn paths the rules refuse into others), percent-decoded as UTF-8."""
    raw: bytes | None = scope.get("raw_path")
    text = raw.decode("latin-1") if raw else ""
    if not text.startswith(FILES):
        return routed.removeprefix("/")
    try:
        return unquote(text[len(FILES) :], errors="strict")
    except UnicodeDecodeError:
        raise ValidationFailed("path", "must be UTF-8 once percent-decoded", "path") from None


def _declared_size(request: Request[Any, Any, Any]) -> int | None:
    value = request.headers.get("content-length")
    return int(value) if value is not None and value.isascii() and value.isdigit() else None


async def _download(scope: Scope, request: Request[Any, Any, Any], path: str) -> ASGIResponse:
    """The answer to a GET or HEAD of the file's current version (BlobMissing: replaced before its bytes opened)."""
    ports, principal = caller(scope)
    stored = await usecases.get_file(ports, principal.organization_id, path)
    headers = _headers(stored)
    tag = headers["etag"]
    if none_match(request.headers.get("if-none-match"), tag):
        return ASGIResponse(status_code=304, headers=headers)
    try:
        wanted = wanted_range(request.headers.get("range"), request.headers.get("if-range"), tag, stored.size)
    except Unsatisfiable:
        body = envelope(416, "RANGE_NOT_SATISFIABLE", f"the file has {stored.size} bytes", {"size": stored.size})
        headers["content-range"] = f"bytes */{stored.size}"
        return ASGIResponse(body=msgspec.json.encode(body), status_code=416, headers=headers)
    status, length = (200, stored.size) if wanted is None else (206, wanted.length)
    headers["content-type"] = stored.content_type
    headers["content-length"] = str(length)
    if wanted is not None:
        headers["content-range"] = f"bytes {wanted.start}-{wanted.stop - 1}/{stored.size}"
    if request.method == HttpMethod.HEAD:
        return ASGIResponse(status_code=status, headers=headers, is_head_response=True)
    chunks = await usecases.open_file(ports, stored, wanted)
    return ASGIStreamingResponse(iterator=chunks, status_code=status, headers=headers, content_length=length)


@routes(
    Resource("file", "File", StoredFile, StoredFileList, file_out, at="/files"),
    Listing(
        usecases.list_files,
        ordered=False,
        before=(Query("prefix", Prefix, ""),),
        doc="The organization's files in path order, those under `prefix` only when given.",
    ),
)
class StorageController(Controller):
    path = "/api/v1/storage"
    tags = ["storage"]

    @put(
        "/files/{path:path}",
        operation_id="putFile",
        status_code=201,
        request_max_body_size=None,
        operation_class=UploadOperation,
        opt={"writes_anywhere": True},  # a viewer's upload is 403 on every path (security.require_role)
        responses={**errors(413), **PUT_RESPONSES},
    )
    async def put_file(self, path: FilePath, request: Request[Any, Any, Any], scope: Scope) -> Response[StoredFile]:
        """Upload a file (the raw body; its Content-Type is kept): 201 when new, 200 when it replaced the file at the
        path. Streamed, hashed as it comes, committed whole or not at all; past the quota: 413 and nothing kept."""
        ports, principal = caller(scope)
        upload = usecases.Upload(
            path=_file_path(scope, path),
            content_type=request.headers.get("content-type"),
            declared_size=_declared_size(request),
        )
        stored, created = await usecases.put_file(ports, principal.organization_id, upload, _body(request))
        return Response(file_out(stored), status_code=201 if created else 200, headers={"etag": etag(stored.sha256)})

    @route(
        "/files/{path:path}",
        http_method=[HttpMethod.GET, HttpMethod.HEAD],
        operation_id=lambda handler, method, components: "headFile" if method == HttpMethod.HEAD else "getFile",
        operation_class=DownloadOperation,
        responses={**errors(404), **FILE_RESPONSES},
    )
    async def get_file(self, path: FilePath, request: Request[Any, Any, Any], scope: Scope) -> ASGIResponse:
        """Download a file (HEAD: its headers only). ETag is its SHA-256: If-None-Match answers 304; one Range
        (`bytes=a-b`, `a-`, `-n`) answers 206 with Content-Range, 416 when it starts past the end."""
        for _ in range(usecases.READ_ATTEMPTS):  # again when the version read was replaced before its bytes opened
            try:
                return await _download(scope, request, _file_path(scope, path))
            except BlobMissing:
                continue
        raise usecases.too_busy()

    @delete("/files/{path:path}", operation_id="deleteFile", status_code=204, responses=errors(404))
    async def delete_file(self, path: FilePath, scope: Scope) -> None:
        """Delete a file: gone for everyone once answered; its bytes are removed after."""
        ports, principal = caller(scope)
        await usecases.delete_file(ports, principal.organization_id, _file_path(scope, path))

    @get("/usage", operation_id="getStorageUsage", responses=errors())
    async def usage(self, scope: Scope) -> StorageUsage:
        """How many files the organization keeps, their bytes, and its quota."""
        ports, principal = caller(scope)
        usage = await usecases.storage_usage(ports, principal.organization_id)
        return StorageUsage(files=usage.files, bytes_used=usage.bytes_used, quota_bytes=usage.quota_bytes)


async def file_at(ports: Ports, organization_id: str, path: str) -> object:
    """The organization's file at a route's `path` (Litestar's path parameter starts with '/')."""
    return await usecases.get_file(ports, organization_id, path.removeprefix("/"))


AREA = HttpArea((StorageController,), visible={"path": file_at})
