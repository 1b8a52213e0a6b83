"""How the storage routes appear in the OpenAPI document: a raw request body, raw downloads, their headers.

Litestar documents a request body only for a `data` parameter (which would read the body whole), and a handler's
own ASGI response without content: these operation classes finish the description once Litestar built it."""

from __future__ import annotations

from dataclasses import dataclass

from litestar.enums import ParamType
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import (
    OpenAPIFormat,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Reference,
    RequestBody,
    Schema,
)
from litestar.openapi.spec import Parameter as OpenAPIParameter

from controlplane_wire.base import ErrorResponse
from controlplane_wire.storage import StoredFile

BINARY = Schema(type=OpenAPIType.STRING, format=OpenAPIFormat.BINARY)
TEXT = Schema(type=OpenAPIType.STRING)
PUT_RESPONSES = {200: ResponseSpec(data_container=StoredFile, description="Replaced the file at this path")}
FILE_RESPONSES = {
    206: ResponseSpec(data_container=None, description="The range asked for (Content-Range)"),
    304: ResponseSpec(data_container=None, description="Not modified: If-None-Match names this version"),
    416: ResponseSpec(
        data_container=ErrorResponse,
        description="Range not satisfiable (it starts past the end): Content-Range gives the size",
        generate_examples=False,
    ),
}
_HEADERS = {
    "etag": "The file's SHA-256, quoted (a strong entity tag)",
    "content-length": "Bytes in this response's body",
    "accept-ranges": "bytes",
    "last-modified": "When the file was last written",
    "x-content-type-options": "nosniff: the Content-Type is never second-guessed",
    "content-disposition": "inline for text/plain, application/json and raster images (png, jpeg, gif, webp, avif); "
    "attachment for every other type; filename* is the path's last segment",
    "content-security-policy": "default-src 'none'; sandbox (a file rendered anyway runs nothing)",
}
_REQUEST_HEADERS = {
    "range": "One byte range: bytes=START-END, bytes=START- or bytes=-SUFFIX (others are ignored: 200, whole)",
    "if-none-match": "Entity tags (or *): 304 when one names this version",
    "if-range": "An entity tag: the Range applies only to that version (else 200, whole)",
}


def _described(names: dict[str, str]) -> dict[str, OpenAPIHeader | Reference]:
    return {name: OpenAPIHeader(schema=TEXT, description=text) for name, text in names.items()}


@dataclass
class UploadOperation(Operation):
    """An upload's raw body, any media type (kept as the file's Content-Type)."""

    def __post_init__(self) -> None:
        self.request_body = RequestBody(
            content={"application/octet-stream": OpenAPIMediaType(schema=BINARY)},
            description="The file's bytes, raw; any Content-Type (kept, application/octet-stream when absent)",
            required=False,
        )


@dataclass
class DownloadOperation(Operation):
    """A download's raw body and headers (GET), or its headers alone (HEAD); its conditional request headers."""

    def __post_init__(self) -> None:
        head = self.operation_id == "headFile"
        self.parameters = [
            *(self.parameters or []),
            *(
                OpenAPIParameter(name=name, param_in=ParamType.HEADER, required=False, schema=TEXT, description=text)
                for name, text in _REQUEST_HEADERS.items()
            ),
        ]
        content = None if head else {"*/*": OpenAPIMediaType(schema=BINARY)}
        ranged = {**_HEADERS, "content-range": "bytes START-END/SIZE"}
        responses = self.responses or {}
        responses["200"] = OpenAPIResponse(
            description="The file's bytes, with its Content-Type", content=content, headers=_described(_HEADERS)
        )
        responses["206"] = OpenAPIResponse(
            description="The range asked for", content=content, headers=_described(ranged)
        )
        self.responses = responses
