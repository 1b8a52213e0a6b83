"""OPTIONS answers 204 with an `Allow` header that names every method of the path."""

from __future__ import annotations

import re
from pathlib import Path

from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.conftest import build_test_app
from tests.support import SERVICE_KEY, bearer


def test_options_lists_every_method_of_a_path(tmp_path: Path) -> None:
    with TestClient(build_test_app("memory", tmp_path, ManualClock())) as client:
        client.headers.update(bearer(SERVICE_KEY))
        collection = client.options("/api/v1/agents")
        item = client.options("/api/v1/agents/some-agent")
        membership = client.options("/api/v1/teams/some-team/agents/some-agent")
    assert (collection.status_code, collection.headers["allow"]) == (204, "GET, OPTIONS, POST")
    assert (item.status_code, item.headers["allow"]) == (204, "DELETE, GET, OPTIONS, PATCH")
    assert membership.headers["allow"] == "DELETE, OPTIONS, POST"


def test_every_route_answers_options_with_its_methods(tmp_path: Path) -> None:
    app = build_test_app("memory", tmp_path, ManualClock())
    wrong = []
    with TestClient(app) as client:
        client.headers.update(bearer(SERVICE_KEY))
        for route in app.routes:
            if not isinstance(route, HTTPRoute):
                continue
            answer = client.options(re.sub(r"\{[^}]+\}", "x", route.path))
            expected = ", ".join(sorted(route.methods))
            if (answer.status_code, answer.headers.get("allow")) != (204, expected):
                wrong.append((route.path, answer.status_code, answer.headers.get("allow"), expected))
    assert wrong == []
