"""ASGI entry for `controlplane serve --workers N`: every worker process builds the app from the environment."""

from __future__ import annotations

from litestar import Litestar

from controlplane_adapters.settings.loading import load_settings
from controlplane_http.bootstrap import build_app


def create() -> Litestar:
    return build_app(load_settings(), freeze_after_start=True, stop_on_signals=True)
