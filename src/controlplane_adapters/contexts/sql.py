"""Contexts in SQL: the contexts set on owners (`contexts`), the contexts stored with executions
(`execution_contexts`), their row mapping, the one read of the contexts that apply to a new execution, and the
repository."""

from __future__ import annotations

import functools
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from controlplane_adapters.agents.sql import agents
from controlplane_adapters.environments.sql import worker_queues
from controlplane_adapters.projects.sql import project_agents, project_teams
from controlplane_adapters.sql.base import SqlConnection
from controlplane_adapters.sql.columns import Json, from_json, metadata, organization_column, timestamps, to_json
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.statements import upsert
from controlplane_domain.contexts.entity import Context, Knowledge, Layer, OwnedContext, OwnerType, ResolvedContext
from controlplane_domain.errors import NotFound

OWNER_COLUMNS = {
    OwnerType.PROJECT: ("project_id", "projects"),
    OwnerType.ENVIRONMENT: ("environment_id", "environments"),
    OwnerType.TEAM: ("team_id", "teams"),
    OwnerType.AGENT: ("agent_id", "agents"),
}


def _owner_reference(column: str, referred: str) -> sa.Column[str]:
    """The owner again, in the column of its kind: deleting the owner deletes its context (foreign key)."""
    return sa.Column(column, sa.String(64), sa.ForeignKey(f"{referred}.id", ondelete="CASCADE"), nullable=True)


contexts = sa.Table(
    "contexts",
    metadata,
    sa.Column("owner_id", sa.String(64), primary_key=True),
    sa.Column("owner_type", sa.String(16), nullable=False),
    organization_column(),
    *(_owner_reference(column, referred) for column, referred in OWNER_COLUMNS.values()),
    sa.Column("instructions", sa.Text(), nullable=False),
    sa.Column("knowledge", Json, nullable=False),
    sa.Column("variables", Json, nullable=False),
    sa.Column("storage_paths", Json, nullable=False),
    *timestamps(),
    *(sa.UniqueConstraint(column) for column, _ in OWNER_COLUMNS.values()),
    sa.Index("ix_contexts_organization_id", "organization_id"),
)

execution_contexts = sa.Table(
    "execution_contexts",
    metadata,
    sa.Column("execution_id", sa.String(64), sa.ForeignKey("executions.id", ondelete="CASCADE"), primary_key=True),
    organization_column(),
    sa.Column("context", Json, nullable=False),
)


def owned_to_row(owned: OwnedContext) -> dict[str, Any]:
    row: dict[str, Any] = {column: None for column, _ in OWNER_COLUMNS.values()}
    row.update(
        owner_id=owned.owner_id,
        owner_type=owned.owner_type.value,
        organization_id=owned.organization_id,
        instructions=owned.context.instructions,
        knowledge=to_json(owned.context.knowledge),
        variables=dict(owned.context.variables),
        storage_paths=list(owned.context.storage_paths),
        created_at=owned.created_at,
        updated_at=owned.updated_at,
    )
    row[OWNER_COLUMNS[owned.owner_type][0]] = owned.owner_id
    return row


def owned_to_domain(row: Any) -> OwnedContext:
    return OwnedContext(
        organization_id=row.organization_id,
        owner_type=OwnerType(row.owner_type),
        owner_id=row.owner_id,
        context=Context(
            instructions=row.instructions,
            knowledge=tuple(Knowledge(**item) for item in row.knowledge),
            variables=dict(row.variables),
            storage_paths=tuple(row.storage_paths),
        ),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def context_value(resolved: ResolvedContext) -> Any:
    """The `context` column's value of an execution's context: the merged context and its sources, as JSON."""
    return to_json(resolved)


def execution_context_row(organization_id: str, execution_id: str, resolved: ResolvedContext) -> dict[str, Any]:
    return {"execution_id": execution_id, "organization_id": organization_id, "context": context_value(resolved)}


def stored_context_of(changed: sa.CTE) -> sa.CTE:
    """Postgres: the insert of a new execution's context (the `context` parameter) for each row of `changed` (an
    execution's insert returning its id and organization), a CTE of the execution's one statement."""
    value = sa.bindparam("context", type_=execution_contexts.c.context.type)
    rows = sa.select(changed.c.id, changed.c.organization_id, value)
    return execution_contexts.insert().from_select(["execution_id", "organization_id", "context"], rows).cte("stored")


@functools.cache
def applicable_contexts() -> sa.Select[Any]:
    """The contexts that apply to a new execution, in one statement: the owners (the agent, the team given or the
    agent's, the queue's environment, the projects holding the agent or the team, each with when it joined) joined
    to their contexts by primary key."""
    organization = sa.bindparam("organization_id", type_=sa.String())
    agent = sa.bindparam("agent_id", type_=sa.String())
    agent_team = (
        sa.select(agents.c.team_id).where(agents.c.organization_id == organization, agents.c.id == agent)
    ).scalar_subquery()
    team = sa.func.coalesce(sa.bindparam("team_id", type_=sa.String()), agent_team)
    owners = sa.union_all(  # the projects first: their join time gives the column its type
        sa.select(project_agents.c.project_id.label("owner_id"), project_agents.c.created_at.label("joined")).where(
            project_agents.c.organization_id == organization, project_agents.c.agent_id == agent
        ),
        sa.select(project_teams.c.project_id, project_teams.c.created_at).where(
            project_teams.c.organization_id == organization, project_teams.c.team_id == team
        ),
        sa.select(agent, sa.null()),
        sa.select(team, sa.null()),
        sa.select(worker_queues.c.environment_id, sa.null()).where(
            worker_queues.c.organization_id == organization, worker_queues.c.id == sa.bindparam("queue_id")
        ),
    ).subquery("owners")
    c = contexts
    return hot(
        sa.select(c, owners.c.joined)
        .select_from(owners.join(c, c.c.owner_id == owners.c.owner_id))
        .where(c.c.organization_id == organization)
    )


@functools.cache
def _by_owner(for_execution: bool = False) -> sa.Select[Any]:
    if for_execution:
        t = execution_contexts
        return hot(
            sa.select(t.c.context).where(
                t.c.organization_id == sa.bindparam("organization_id"), t.c.execution_id == sa.bindparam("id")
            )
        )
    c = contexts
    return hot(
        sa.select(c).where(
            c.c.organization_id == sa.bindparam("organization_id"),
            c.c.owner_type == sa.bindparam("owner_type"),
            c.c.owner_id == sa.bindparam("id"),
        )
    )


class SqlContextRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection

    async def get(self, organization_id: str, owner_type: OwnerType, owner_id: str) -> OwnedContext | None:
        parameters = {"organization_id": organization_id, "owner_type": owner_type.value, "id": owner_id}
        row = (await self.connection.execute(_by_owner(), parameters)).first()
        return None if row is None else owned_to_domain(row)

    async def put(self, owned: OwnedContext) -> None:
        statement = upsert(self.connection.dialect.name, contexts, ("owner_id",))
        try:
            await self.connection.execute(statement, owned_to_row(owned))
        except IntegrityError as exc:  # the owner was deleted since the use case found it
            raise NotFound(owned.owner_type.value, owned.owner_id) from exc

    async def delete(self, organization_id: str, owner_type: OwnerType, owner_id: str) -> None:
        c = contexts
        await self.connection.execute(
            c.delete().where(
                c.c.organization_id == organization_id, c.c.owner_type == owner_type.value, c.c.owner_id == owner_id
            )
        )

    async def applicable(
        self, organization_id: str, *, agent_id: str | None, team_id: str | None, queue_id: str
    ) -> list[Layer]:
        parameters = {"organization_id": organization_id, "agent_id": agent_id, "team_id": team_id,
                      "queue_id": queue_id}  # fmt: skip
        rows = await self.connection.execute(applicable_contexts(), parameters)
        return [Layer(owned_to_domain(row), row.joined) for row in rows]

    async def any_in(self, organization_id: str) -> bool:
        found = sa.select(contexts.c.owner_id).where(contexts.c.organization_id == organization_id).limit(1)
        return (await self.connection.execute(found)).first() is not None

    async def for_execution(self, organization_id: str, execution_id: str) -> ResolvedContext | None:
        parameters = {"organization_id": organization_id, "id": execution_id}
        row = (await self.connection.execute(_by_owner(for_execution=True), parameters)).first()
        return None if row is None else from_json(row.context, ResolvedContext)
