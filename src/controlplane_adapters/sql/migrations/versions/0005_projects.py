"""projects and the agents and teams they hold

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 17:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def _members(name: str, member: str, referred: str) -> None:
    op.create_table(
        name,
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column(member, sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f(f"fk_{name}_project_id_projects"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            [member], [f"{referred}.id"], name=op.f(f"fk_{name}_{member}_{referred}"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("project_id", member, name=op.f(f"pk_{name}")),
    )
    op.create_index(op.f(f"ix_{name}_{member}"), name, [member], unique=False)


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("key", sa.String(length=16), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("settings", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_projects_organization_id_name")),
        sa.UniqueConstraint("organization_id", "key", name=op.f("uq_projects_organization_id_key")),
    )
    op.create_index("ix_projects_org_created", "projects", ["organization_id", "created_at", "id"], unique=False)
    _members("project_agents", "agent_id", "agents")
    _members("project_teams", "team_id", "teams")


def downgrade() -> None:
    op.drop_table("project_teams")
    op.drop_table("project_agents")
    op.drop_index("ix_projects_org_created", table_name="projects")
    op.drop_table("projects")
