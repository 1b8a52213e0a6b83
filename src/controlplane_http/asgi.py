"""ASGI entry: `serve --workers N` hands each server process its settings (`create(settings)`, cli.py); run by an
ASGI server of one's own (`uvicorn --factory controlplane_http.asgi:create`), it reads them from the environment
and then takes its secrets out of it, as `serve` does.

Light to import: a server process unpickles `create` before uvicorn's health check answers in it, so the app's
modules are imported inside `create` (the supervisor would otherwise take a slow start for a dead process)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from litestar import Litestar

    from controlplane_adapters.settings.model import Settings


def create(settings: Settings | None = None) -> Litestar:
    from controlplane_adapters.settings.environment import withdraw_secrets
    from controlplane_adapters.settings.loading import load_settings
    from controlplane_http.bootstrap import build_app

    if settings is None:
        settings = withdraw_secrets(load_settings(), os.environ)
    return build_app(settings, freeze_after_start=True, stop_on_signals=True)
