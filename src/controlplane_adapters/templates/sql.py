"""Templates in SQL: the organizations' templates table, its row mapping and the repository."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, id_column, metadata, organization_column, timestamps
from controlplane_domain.templates.entity import Template, TemplateKind, TemplateParameter

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


def template_to_row(template: Template) -> dict[str, Any]:
    return {
        "id": template.id,
        "organization_id": template.organization_id,
        "name": template.name,
        "kind": template.kind.value,
        "description": template.description,
        "parameters": [
            {"name": p.name, "description": p.description, "required": p.required, "default": p.default}
            for p in template.parameters
        ],
        "body": template.body,
        "created_at": template.created_at,
        "updated_at": template.updated_at,
    }


def template_to_domain(row: Any) -> Template:
    return Template(
        id=row.id,
        organization_id=row.organization_id,
        name=row.name,
        kind=TemplateKind(row.kind),
        description=row.description,
        parameters=tuple(
            TemplateParameter(
                name=item["name"], description=item["description"], required=item["required"], default=item["default"]
            )
            for item in row.parameters
        ),
        body=dict(row.body),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class SqlTemplateRepository(SqlRepository[Template]):
    table = templates
    to_row = staticmethod(template_to_row)
    to_domain = staticmethod(template_to_domain)
    noun = "template"
