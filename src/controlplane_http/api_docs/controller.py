"""Swagger UI for /api/docs, from the files in `static/swagger-ui` (swagger-ui-dist, unchanged): the page Litestar
renders points at them instead of a CDN, so the documentation works without internet. The assets are public like
the page (they hold no data) and not in the OpenAPI document."""

from __future__ import annotations

from functools import cache
from importlib import resources

from litestar import Controller, Response, get
from litestar.exceptions import NotFoundException
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.params import FromPath

from controlplane_http.area import HttpArea

SWAGGER_UI_VERSION = "5.35.0"
"""The version of swagger-ui-dist whose files `static/swagger-ui` holds (its README says how to upgrade)."""
ASSETS_PREFIX = "/api/docs/assets/"
"""Where the assets are served (public: `controlplane_http/middleware.py`)."""
# The version is in the URL, so a browser may keep an asset for good: an upgrade changes its URL.
_BASE = f"{ASSETS_PREFIX}swagger-ui-{SWAGGER_UI_VERSION}"
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "public, max-age=31536000, immutable",
}


def swagger_page(path: str) -> SwaggerRenderPlugin:
    """Litestar's Swagger UI page at `path` (under the OpenAPI path), with every URL it loads on this server."""
    return SwaggerRenderPlugin(
        path=path,
        js_url=f"{_BASE}/swagger-ui-bundle.js",
        css_url=f"{_BASE}/swagger-ui.css",
        standalone_preset_js_url=f"{_BASE}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' type='image/png' href='{_BASE}/favicon-32x32.png'>",
    )


@cache
def _read(name: str) -> bytes:
    return (resources.files(__package__) / "static" / "swagger-ui" / name).read_bytes()


class SwaggerAssetController(Controller):
    path = _BASE
    include_in_schema = False

    @get("/{name:str}", sync_to_thread=False)
    def asset(self, name: FromPath[str]) -> Response[bytes]:
        if name not in ASSETS:
            raise NotFoundException(f"no asset {name!r}")
        return Response(_read(name), media_type=ASSETS[name], headers=HEADERS)


AREA = HttpArea((SwaggerAssetController,))
