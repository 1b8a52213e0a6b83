"""What a lease reads in SQL besides the lease itself (`lease_extras`): one statement, two primary-key lookups."""

from __future__ import annotations

import functools
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.contexts.sql import execution_contexts
from controlplane_adapters.skills.sql import environment_skills
from controlplane_adapters.sql.hot import hot


@functools.cache
def lease_extras_statement() -> sa.Select[Any]:
    """The context stored with the execution (null: none), and whether the environment has skills attached, as
    one row without a FROM: each a lookup by its table's primary key (or its first column)."""
    organization = sa.bindparam("organization_id", type_=sa.String())
    c, s = execution_contexts, environment_skills
    context = (
        sa.select(c.c.context)
        .where(c.c.organization_id == organization, c.c.execution_id == sa.bindparam("execution_id"))
        .scalar_subquery()
    )
    environment = sa.bindparam("environment_id", type_=sa.String())
    skills = sa.exists().where(s.c.environment_id == environment, s.c.organization_id == organization)
    return hot(sa.select(context.label("context"), skills.label("environment_has_skills")))
