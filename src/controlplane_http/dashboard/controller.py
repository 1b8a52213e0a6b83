"""Serves the dashboard's page and assets. Public (the page holds no data: it asks the API with the key the
operator types, kept in the tab's session storage); strict security headers; not in the OpenAPI document."""

from __future__ import annotations

from functools import cache
from importlib import resources

from litestar import Controller, Response, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath

ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:;"
        " base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@cache
def _read(name: str) -> bytes:
    return (resources.files(__package__) / "static" / name).read_bytes()


class DashboardController(Controller):
    path = "/dashboard"
    include_in_schema = False

    @get(["/", "/index.html"], sync_to_thread=False)
    def page(self) -> Response[bytes]:
        return Response(_read("index.html"), media_type="text/html; charset=utf-8", headers=HEADERS)

    @get("/static/{name:str}", sync_to_thread=False)
    def asset(self, name: FromPath[str]) -> Response[bytes]:
        if name not in ASSETS:
            raise NotFoundException(f"no asset {name!r}")
        return Response(_read(name), media_type=ASSETS[name], headers=HEADERS)
