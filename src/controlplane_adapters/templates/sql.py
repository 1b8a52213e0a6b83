"""Templates in SQL: the organizations' templates table, its row mapping and the repository."""

from __future__ import annotations

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, owned_table
from controlplane_adapters.sql.rows import RowMapping
from controlplane_domain.templates.entity import Template

templates = owned_table(
    "templates",
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("parameters", Json, nullable=False),
    sa.Column("body", Json, nullable=False),
    unique=("name",),
)


class SqlTemplateRepository(SqlRepository[Template]):
    rows = RowMapping(Template, templates)
    noun = "template"
    audited = Template.audited
