"""Serves the console's page and assets. Public (the page holds no data: it asks the API with the credential the
operator types, kept in the tab's session storage); strict security headers; not in the OpenAPI document.

The assets are the files under `static/` (the console's ES modules, its style sheet and the vendored libraries
under `static/vendor/`), listed once when this module loads: a name that is not one of them is 404, so no path
reaches outside the folder."""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable

from litestar import Controller, Response, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath

from controlplane_http.area import HttpArea

MEDIA_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data: blob:;"
        " base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
VENDOR_HEADERS = {**HEADERS, "Cache-Control": "public, max-age=86400"}  # pinned files: a new version, a new name


def _walk(folder: Traversable, prefix: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for entry in folder.iterdir():
        name = f"{prefix}{entry.name}"
        if entry.is_dir():
            found.update(_walk(entry, f"{name}/"))
            continue
        suffix = entry.name[entry.name.rfind(".") :] if "." in entry.name else ""
        if suffix in MEDIA_TYPES:
            found[name] = MEDIA_TYPES[suffix]
    return found


STATIC = resources.files(__package__) / "static"
ASSETS = _walk(STATIC, "")


@cache
def _read(name: str) -> bytes:
    target = STATIC
    for part in name.split("/"):
        target = target / part
    return target.read_bytes()


class DashboardController(Controller):
    path = "/dashboard"
    include_in_schema = False

    @get(["/", "/index.html"], sync_to_thread=False)
    def page(self) -> Response[bytes]:
        return Response(_read("index.html"), media_type="text/html; charset=utf-8", headers=HEADERS)

    @get("/static/{name:path}", sync_to_thread=False)
    def asset(self, name: FromPath[str]) -> Response[bytes]:
        name = name.lstrip("/")
        if name not in ASSETS:
            raise NotFoundException(f"no asset {name!r}")
        headers = VENDOR_HEADERS if name.startswith("vendor/") else HEADERS
        return Response(_read(name), media_type=ASSETS[name], headers=headers)


AREA = HttpArea((DashboardController,))
