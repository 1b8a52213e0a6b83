"""Membership has one truth under any sequence of operations (hypothesis state machine, memory adapters)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule

from controlplane_adapters.clock import ManualClock
from controlplane_domain.agents import usecases as agents
from controlplane_domain.errors import NotFound, ValidationFailed
from controlplane_domain.paging import PageRequest
from controlplane_domain.teams import usecases as teams
from tests.support import memory_ports

T = TypeVar("T")
ORG = "org-a"
OTHER = "org-b"


class Membership(RuleBasedStateMachine):
    """A model (agent -> team) checked against the service after every step."""

    agent_ids = Bundle("agents")
    team_ids = Bundle("teams")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = ManualClock()
        self.ports = memory_ports(self.clock)
        self.model: dict[str, str | None] = {}
        self.teams: set[str] = set()
        self.counter = 0
        self.foreign_agent = self.run(agents.create_agent(self.ports, OTHER, agents.CreateAgent(name="foreign"))).id

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coroutine)

    def teardown(self) -> None:
        self.loop.close()

    def _name(self, prefix: str) -> str:
        self.counter += 1
        self.clock.advance(0.001)
        return f"{prefix}-{self.counter}"

    @rule(target=agent_ids)
    def create_agent(self) -> str:
        agent = self.run(agents.create_agent(self.ports, ORG, agents.CreateAgent(name=self._name("agent"))))
        self.model[agent.id] = None
        return agent.id

    @rule(target=team_ids, members=st.lists(agent_ids, max_size=4))
    def create_team(self, members: list[str]) -> str:
        live = [m for m in members if m in self.model]
        command = teams.CreateTeam(name=self._name("team"), member_ids=live)
        if len(live) != len(members):
            try:
                self.run(teams.create_team(self.ports, ORG, command))
            except ValidationFailed:
                return "missing-team"
            raise AssertionError("a deleted agent was accepted as a member")
        team = self.run(teams.create_team(self.ports, ORG, command)).team
        self.teams.add(team.id)
        for member in live:
            self.model[member] = team.id
        return team.id

    @rule(team=team_ids, agent=agent_ids)
    def add(self, team: str, agent: str) -> None:
        try:
            self.run(teams.add_agent_to_team(self.ports, ORG, team, agent))
        except NotFound:
            assert team not in self.teams or agent not in self.model
            return
        self.model[agent] = team

    @rule(team=team_ids, agent=agent_ids)
    def remove(self, team: str, agent: str) -> None:
        try:
            self.run(teams.remove_agent_from_team(self.ports, ORG, team, agent))
        except NotFound:
            assert team not in self.teams or agent not in self.model
            return
        if self.model[agent] == team:
            self.model[agent] = None

    @rule(team=team_ids, members=st.lists(agent_ids, max_size=5), foreign=st.booleans())
    def patch_member_ids(self, team: str, members: list[str], foreign: bool) -> None:
        wanted = [*members, self.foreign_agent] if foreign else members
        command = teams.UpdateTeam(member_ids=wanted)
        valid = team in self.teams and all(m in self.model for m in members) and not foreign
        try:
            self.run(teams.update_team(self.ports, ORG, team, command))
        except (NotFound, ValidationFailed):
            assert not valid
            return
        assert valid
        for agent, current in self.model.items():
            if current == team and agent not in members:
                self.model[agent] = None
        for member in members:
            self.model[member] = team

    @rule(agent=agent_ids, team=st.one_of(st.none(), team_ids))
    def patch_agent_team(self, agent: str, team: str | None) -> None:
        try:
            self.run(agents.update_agent(self.ports, ORG, agent, agents.UpdateAgent(team_id=team)))
        except (NotFound, ValidationFailed):
            assert agent not in self.model or (team is not None and team not in self.teams)
            return
        self.model[agent] = team

    @rule(agent=consumes(agent_ids))
    def delete_agent(self, agent: str) -> None:
        try:
            self.run(agents.delete_agent(self.ports, ORG, agent))
        except NotFound:
            assert agent not in self.model
            return
        del self.model[agent]

    @rule(team=consumes(team_ids))
    def delete_team(self, team: str) -> None:
        try:
            self.run(teams.delete_team(self.ports, ORG, team, force=True))  # (its members leave it)
        except NotFound:
            assert team not in self.teams
            return
        self.teams.discard(team)
        for agent, current in self.model.items():
            if current == team:
                self.model[agent] = None

    @invariant()
    def agents_and_teams_agree(self) -> None:
        page = PageRequest(limit=200)
        stored_agents = self.run(agents.list_agents(self.ports, ORG, page)).items
        assert {agent.id: agent.team_id for agent in stored_agents} == self.model
        views = self.run(teams.list_teams(self.ports, ORG, page)).items
        assert {view.team.id for view in views} == self.teams
        seen: list[str] = []
        for view in views:
            expected = sorted(agent for agent, team in self.model.items() if team == view.team.id)
            assert sorted(view.member_ids) == expected
            assert all(member.team_id == view.team.id for member in view.members)
            seen.extend(view.member_ids)
        assert len(seen) == len(set(seen)), "an agent is in two teams"
        foreign = self.run(agents.get_agent(self.ports, OTHER, self.foreign_agent))
        assert foreign.team_id is None


TestMembership = Membership.TestCase
TestMembership.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
