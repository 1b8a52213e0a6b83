"""Templates in SQL: the organizations' templates table, its row mapping and the repository."""

from __future__ import annotations

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, id_column, metadata, organization_column, timestamps
from controlplane_adapters.sql.rows import RowMapping
from controlplane_domain.templates.entity import Template

templates = sa.Table(
    "templates",
    metadata,
    id_column(),
    organization_column(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("parameters", Json, nullable=False),
    sa.Column("body", Json, nullable=False),
    *timestamps(),
    sa.UniqueConstraint("organization_id", "name"),
    sa.Index("ix_templates_org_created", "organization_id", "created_at", "id"),
)


class SqlTemplateRepository(SqlRepository[Template]):
    rows = RowMapping(Template, templates)
    noun = "template"
