"""Every bound of the LLM and reasoning configs, and the MCP single-transport rule, in the domain."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controlplane_domain.config import (
    LLM_BOUNDS,
    REASONING_BOUNDS,
    ExecutionEnvironment,
    LLMConfig,
    MCPServerConfig,
    ReasoningConfig,
    TeamSettings,
)
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.rules import Bound
from controlplane_domain.teams import usecases as teams
from tests.support import memory_ports

INTEGER_FIELDS = {"max_tokens", "top_k", "min_steps", "max_steps"}


async def create(settings: TeamSettings | None = None, environment: ExecutionEnvironment | None = None) -> None:
    command = teams.CreateTeam(name="t", settings=settings or TeamSettings(), execution_environment=environment)
    await teams.create_team(memory_ports(), "org", command)


def settings_with(section: str, name: str, value: Any) -> TeamSettings:
    if section == "llm":
        return TeamSettings(llm=LLMConfig(**{name: value}))
    extra = {"min_steps": 1} if name == "max_steps" else {}
    return TeamSettings(reasoning=ReasoningConfig(**{name: value, **extra}))


def edge_cases(section: str, name: str, bound: Bound) -> list[tuple[str, str, Any, bool]]:
    integer = name in INTEGER_FIELDS
    cases = []
    for edge, outward in ((bound.ge, -math.inf), (bound.le, math.inf)):
        if edge is None:
            continue
        inside = int(edge) if integer else float(edge)
        outside = inside + (1 if outward > 0 else -1) if integer else math.nextafter(inside, outward)
        cases += [(section, name, inside, True), (section, name, outside, False)]
    return cases


EDGES = [case for name, bound in LLM_BOUNDS.items() for case in edge_cases("llm", name, bound)] + [
    case for name, bound in REASONING_BOUNDS.items() for case in edge_cases("reasoning", name, bound)
]


@pytest.mark.parametrize(("section", "name", "value", "ok"), EDGES)
async def test_edges_accepted_one_step_outside_rejected(section: str, name: str, value: Any, ok: bool) -> None:
    if ok:
        await create(settings_with(section, name, value))
        return
    with pytest.raises(ValidationFailed) as error:
        await create(settings_with(section, name, value))
    assert error.value.field == f"configuration.{section}.{name}"


def test_every_bound_has_edge_cases() -> None:
    covered = {(section, name) for section, name, _, _ in EDGES}
    assert covered == {("llm", n) for n in LLM_BOUNDS} | {("reasoning", n) for n in REASONING_BOUNDS}


@given(
    name=st.sampled_from(sorted(LLM_BOUNDS)),
    value=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
)
async def test_llm_values_are_accepted_exactly_when_inside_bounds(name: str, value: float) -> None:
    bound = LLM_BOUNDS[name]
    typed: Any = int(value) if name in INTEGER_FIELDS else value
    inside = (bound.ge is None or typed >= bound.ge) and (bound.le is None or typed <= bound.le)
    try:
        await create(TeamSettings(llm=LLMConfig(**{name: typed})))
    except ValidationFailed:
        assert not inside
    else:
        assert inside


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
async def test_non_finite_numbers_are_rejected(value: float) -> None:
    with pytest.raises(ValidationFailed):
        await create(TeamSettings(llm=LLMConfig(temperature=value)))


servers = st.builds(
    MCPServerConfig,
    command=st.one_of(st.none(), st.sampled_from(["npx", "", "  ", "uvx"])),
    args=st.one_of(st.none(), st.lists(st.text(max_size=3), max_size=2)),
    transport_type=st.one_of(st.none(), st.sampled_from(["http", "sse"])),
    url=st.one_of(st.none(), st.sampled_from(["https://mcp.example/sse", ""])),
)


@given(server=servers)
async def test_mcp_server_needs_exactly_one_transport(server: MCPServerConfig) -> None:
    stdio = server.command is not None
    remote = server.url is not None or server.transport_type is not None
    valid = (stdio != remote) and (
        bool(server.command and server.command.strip()) if stdio else bool(server.url and server.url.strip())
    )
    environment = ExecutionEnvironment(mcp_servers={"tools": server})
    try:
        await create(environment=environment)
    except ValidationFailed as error:
        assert not valid
        assert error.field == "execution_environment.mcp_servers.tools"
    else:
        assert valid
