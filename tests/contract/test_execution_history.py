"""What an execution is run with, on every store: taken from its agent and the agent's model when it is added
(the Python rule, `executions.entity.agent_run_with`, and the SQL one, `executions.statements.run_with_of`, give
the same answer), kept when they change later; and migration 0024's fill of the rows that existed before it."""

from __future__ import annotations

from dataclasses import replace

import pytest
import sqlalchemy as sa
from alembic import command

from controlplane_adapters.agents.sql import agent_to_row, agents
from controlplane_adapters.executions.mapping import RUN_WITH_FIELDS, execution_to_row
from controlplane_adapters.executions.table import executions
from controlplane_adapters.llm_models.sql import MODEL_ROWS, llm_models
from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.teams.sql import TEAM_ROWS, teams
from controlplane_domain.executions.entity import ExecutionStatus, RunWith, TargetType, agent_run_with
from tests.contract.conftest import UowFactory
from tests.contract.test_execution_records import events, seed_queue
from tests.contract.test_hot_statements import execution
from tests.contract.test_migrations import empty_database  # noqa: F401  (the fixture: SQLite and Postgres)
from tests.contract.test_repositories import agent, model, team

PRICED = replace(model("gpt-a"), input_cost_per_million=2.0, output_cost_per_million=10.0)
BY_VALUE = replace(model("gpt-b"), input_cost_per_million=1.0)
# a model whose value is another's id: the one named by id wins, with its own (absent) prices
SHADOW = replace(model("org-a-gpt-b"), id="org-a-shadow")
AGENTS = {
    "by-id": (agent("by-id", model_id="org-a-gpt-a", team_id="org-a-team-t1"),
              RunWith(target_name="by-id", model="gpt-a", input_cost_per_million=2.0, output_cost_per_million=10.0,
                      agent_team_id="org-a-team-t1")),
    "by-value": (agent("by-value", model_id="gpt-b"),
                 RunWith(target_name="by-value", model="gpt-b", input_cost_per_million=1.0)),
    "id-first": (agent("id-first", model_id="org-a-gpt-b"), RunWith(target_name="id-first", model="gpt-b",
                                                                    input_cost_per_million=1.0)),
    "shadowed": (agent("shadowed", model_id="org-a-shadow"), RunWith(target_name="shadowed", model="org-a-gpt-b")),
    "unknown-model": (agent("unknown-model", model_id="unregistered"),
                      RunWith(target_name="unknown-model", model="unregistered")),
    "no-model": (agent("no-model"), RunWith(target_name="no-model")),
    "other-org-model": (agent("other-org-model", model_id="org-b-gpt-c"),
                        RunWith(target_name="other-org-model", model="org-b-gpt-c")),
}  # fmt: skip


async def seed(uow: UowFactory) -> None:
    async with uow() as work:
        for each in (PRICED, BY_VALUE, SHADOW, replace(model("gpt-c", org="org-b"), input_cost_per_million=9.0)):
            await work.models.add(each)
        await work.teams.add(team("t1"))
        for each, _ in AGENTS.values():
            await work.agents.add(each)
        await work.commit()


@pytest.mark.parametrize("key", list(AGENTS))
async def test_what_an_agent_runs_with(uow: UowFactory, key: str) -> None:
    await seed(uow)
    mine, expected = AGENTS[key]
    async with uow() as work:
        assert await work.executions.run_with("org-a", mine.id) == expected
        assert await work.executions.run_with("org-b", mine.id) is None  # another organization's agent
        assert await work.executions.run_with("org-a", "nope") is None
    # the Python rule says the same
    assert agent_run_with(mine, [PRICED, BY_VALUE, SHADOW]) == expected


async def test_an_execution_keeps_what_it_was_added_with(uow: UowFactory) -> None:
    await seed_queue(uow)
    await seed(uow)
    mine, expected = AGENTS["by-id"]
    new = replace(execution("e1", None, ExecutionStatus.QUEUED), agent_id=mine.id, last_seq=1)
    async with uow() as work:
        queue_found, agent_found, added = await work.executions.add_if_found(new, events(new, 1))
        await work.commit()
    assert (queue_found, agent_found, added) == (True, True, expected.applied(new))
    async with uow() as work:  # renamed, moved, repriced, then deleted: the execution is as it was added
        await work.agents.update(replace(mine, name="renamed", team_id=None, model_id="gpt-b"))
        await work.models.update(replace(PRICED, value="gpt-a2", input_cost_per_million=99.0))
        await work.commit()
    async with uow() as work:
        assert await work.executions.get("org-a", "e1") == added
        await work.agents.delete("org-a", mine.id)
        await work.models.delete("org-a", PRICED.id)
        await work.teams.delete("org-a", "org-a-team-t1")
        await work.commit()
    async with uow() as work:
        stored = await work.executions.get("org-a", "e1")
    assert stored == added
    assert (stored.target_name, stored.model, stored.input_cost_per_million) == ("by-id", "gpt-a", 2.0)


def _upgrade_to(connection: sa.Connection, revision: str) -> None:
    config = migrate.alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def test_the_migration_fills_the_rows_that_existed(empty_database: str) -> None:  # noqa: F811
    engine = create_engine(empty_database)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(_upgrade_to, "0023")
            await connection.execute(llm_models.insert(), [MODEL_ROWS.to_row(each) for each in (PRICED, BY_VALUE)])
            await connection.execute(teams.insert(), [TEAM_ROWS.to_row(team("t1"))])
            await connection.execute(agents.insert(), [agent_to_row(AGENTS[key][0]) for key in ("by-id", "by-value")])
            old = [
                replace(execution("a1", None, ExecutionStatus.COMPLETED), agent_id="org-a-by-id"),
                replace(execution("a2", None, ExecutionStatus.QUEUED), agent_id="org-a-by-value"),
                replace(execution("a3", None, ExecutionStatus.FAILED), agent_id="org-a-gone"),
                replace(
                    execution("t1", None, ExecutionStatus.COMPLETED),
                    target_type=TargetType.TEAM,
                    agent_id=None,
                    team_id="org-a-team-t1",
                ),
                replace(
                    execution("t2", None, ExecutionStatus.COMPLETED),
                    target_type=TargetType.TEAM,
                    agent_id=None,
                    team_id="org-a-team-gone",
                ),
            ]
            for each in old:  # the row as it was before 0024
                row = {name: value for name, value in execution_to_row(each).items() if name not in RUN_WITH_FIELDS}
                await connection.execute(executions.insert().values(row))
        await migrate.upgrade(engine)
        async with engine.connect() as connection:
            columns = [executions.c.id, *(executions.c[name] for name in RUN_WITH_FIELDS)]
            rows = await connection.execute(sa.select(*columns).order_by(executions.c.id))
            filled = {row.id: RunWith(**{name: getattr(row, name) for name in RUN_WITH_FIELDS}) for row in rows}
    finally:
        await engine.dispose()
    assert filled == {
        "a1": AGENTS["by-id"][1],
        "a2": AGENTS["by-value"][1],
        "a3": RunWith(),  # its agent was gone already: unknown
        "t1": RunWith(target_name="t1"),
        "t2": RunWith(),
    }
