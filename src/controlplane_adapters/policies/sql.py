"""Policies in SQL: the policies and policy_decisions tables, their row mapping and repositories."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlConnection, SqlRepository
from controlplane_adapters.sql.columns import Json, UtcDateTime, owned_table
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.listing import ordered
from controlplane_adapters.sql.pages import read_page_where
from controlplane_adapters.sql.rows import RowMapping
from controlplane_domain.paging import PageRequest
from controlplane_domain.policies.entity import Decision, DecisionFilter, Policy

policies = owned_table(
    "policies",
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("rego", sa.Text(), nullable=False),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    sa.Column("enforcement", sa.String(16), nullable=False),
    sa.Column("actions", Json, nullable=False),
    unique=("name",),
)

policy_decisions = owned_table(
    "policy_decisions",
    sa.Column("evaluation_id", sa.String(64), nullable=False),
    sa.Column("action", sa.String(32), nullable=False),
    sa.Column("policy_id", sa.String(64), nullable=False),
    sa.Column("policy_name", sa.String(255), nullable=False),
    sa.Column("enforcement", sa.String(16), nullable=False),
    sa.Column("allowed", sa.Boolean(), nullable=False),
    sa.Column("deny", Json, nullable=False),
    sa.Column("error", sa.Text(), nullable=True),
    sa.Column("subject", sa.String(255), nullable=True),
    sa.Column("roles", Json, nullable=False),
    sa.Column("resource_type", sa.String(32), nullable=False),
    sa.Column("resource_id", sa.String(64), nullable=True),
    sa.Column("created_at", UtcDateTime(), nullable=False),
    sa.Index("ix_policy_decisions_org_action", "organization_id", "action", "created_at", "id"),
    sa.Index("ix_policy_decisions_org_policy", "organization_id", "policy_id", "created_at", "id"),
    stamped=False,
)


DECISION_CHUNK = 50


@functools.cache
def _add_decisions() -> sa.Insert:
    """A hot statement (sql/hot.py): on Postgres an executemany on the driver, a third of SQLAlchemy's CPU for the
    thousands of rows of a busy quarter second (benchmarks/policies.py)."""
    return hot(policy_decisions.insert())


POLICY_ROWS = RowMapping(Policy, policies)
DECISION_ROWS = RowMapping(Decision, policy_decisions)


class SqlPolicyRepository(SqlRepository[Policy]):
    rows = POLICY_ROWS
    noun = "policy"
    audited = Policy.audited

    async def enabled(self, organization_id: str) -> list[Policy]:
        statement = (
            sa.select(policies)
            .where(policies.c.organization_id == organization_id, policies.c.enabled.is_(True))
            .order_by(policies.c.created_at, policies.c.id)
        )
        return [POLICY_ROWS.to_domain(row) for row in await self.connection.execute(statement)]


class SqlDecisionRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection

    async def add_many(self, decisions: Sequence[Decision]) -> None:
        """A statement per DECISION_CHUNK decisions: a flush of thousands built as one statement held the event
        loop long enough for the requests waiting meanwhile to pay it at their p99; between chunks, they go on."""
        for start in range(0, len(decisions), DECISION_CHUNK):
            chunk = decisions[start : start + DECISION_CHUNK]
            await self.connection.execute(_add_decisions(), [DECISION_ROWS.to_row(d) for d in chunk])

    async def list_page(
        self, organization_id: str, page: PageRequest, where: DecisionFilter
    ) -> tuple[list[Decision], int]:
        table = policy_decisions
        conditions = [table.c.organization_id == organization_id]
        if where.action is not None:
            conditions.append(table.c.action == where.action.value)
        if where.policy_id is not None:
            conditions.append(table.c.policy_id == where.policy_id)
        if where.allowed is not None:
            conditions.append(table.c.allowed.is_(where.allowed))
        if where.since is not None:
            conditions.append(table.c.created_at >= where.since)
        if where.until is not None:
            conditions.append(table.c.created_at < where.until)
        order = ordered(page, table.c.created_at, table.c.id)
        rows, total = await read_page_where(self.connection, organization_id, page, table, conditions, order)
        return [DECISION_ROWS.to_domain(row) for row in rows], total
