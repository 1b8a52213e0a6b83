"""What an area adds to the HTTP app, declared beside its controllers as its `AREA` (the list of them: areas.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field

from litestar import Controller

from controlplane_domain.ports import Ports
from controlplane_http.security import Probe

Lookup = Callable[[Ports, str, str], Awaitable[object]]
"""An area's read of one object by organization and id, `get_x(ports, organization_id, object_id)`: NotFound when
the organization has no such object."""


@dataclass(frozen=True, slots=True)
class HttpArea:
    """An area's controllers (in the OpenAPI document's order) and how to tell whether the objects its path
    parameters name are visible to the caller, so that a caller whose role falls short learns 403 only about objects
    it can see and 404 about another organization's (`security.require_role`).

    `visible`: path parameter -> the area's `Lookup`, asked in the caller's organization. `visible_to`: path
    parameter -> a `Probe` that decides by the caller itself (an organization's id: an operator sees every one)."""

    controllers: tuple[type[Controller], ...]
    visible: Mapping[str, Lookup] = field(default_factory=dict)
    visible_to: Mapping[str, Probe] = field(default_factory=dict)


def _in_callers_organization(lookup: Lookup) -> Probe:
    return lambda ports, principal, value: lookup(ports, principal.organization_id, value)


def visibility(areas: Iterable[HttpArea]) -> dict[str, Probe]:
    """Every area's probes by path parameter; a parameter two areas claim is an error at start."""
    probes: dict[str, Probe] = {}
    for area in areas:
        named = [(name, _in_callers_organization(lookup)) for name, lookup in area.visible.items()]
        for name, probe in [*named, *area.visible_to.items()]:
            if name in probes:
                raise ValueError(f"path parameter '{name}' has two visibility probes")
            probes[name] = probe
    return probes
