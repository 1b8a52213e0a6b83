"""An HTTP area's visibility probes (`area.HttpArea`, gathered in `areas.VISIBILITY`): asked in the caller's
organization, one per path parameter."""

from __future__ import annotations

from typing import Any, cast

import pytest
from litestar import Controller

from controlplane_domain.ports import Ports
from controlplane_domain.principal import Principal, Role
from controlplane_http.area import HttpArea, visibility

CALLER = Principal("org-a", "user:1", Role.VIEWER, "jwt", "jwt:1")


class FirstController(Controller):
    path = "/first"


class SecondController(Controller):
    path = "/second"


async def test_a_probe_asks_the_areas_lookup_in_the_callers_organization() -> None:
    asked: list[tuple[str, str]] = []

    async def get_thing(ports: Ports, organization_id: str, thing_id: str) -> object:
        asked.append((organization_id, thing_id))
        return thing_id

    probes = visibility([HttpArea((FirstController,), visible={"thing_id": get_thing})])

    assert await probes["thing_id"](cast(Ports, None), CALLER, "t-1") == "t-1"
    assert asked == [("org-a", "t-1")]


def test_a_path_parameter_two_areas_claim_fails_at_start() -> None:
    async def lookup(ports: Ports, organization_id: str, object_id: str) -> object:
        return object_id

    async def probe(ports: Ports, principal: Principal, object_id: str) -> Any:
        return object_id

    with pytest.raises(ValueError, match="'thing_id' has two visibility probes"):
        visibility(
            [
                HttpArea((FirstController,), visible={"thing_id": lookup}),
                HttpArea((SecondController,), visible_to={"thing_id": probe}),
            ]
        )
