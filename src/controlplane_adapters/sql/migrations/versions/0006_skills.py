"""skills and their attachments to agents, teams and environments

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26 10:00:00

Agents' and teams' `skill_ids` are left as they are: ids stored before skills existed name no skill, and the
skills' views leave them out (docs/api-decisions.md, "Skills").
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def _attachments(name: str, owner: str, referred: str) -> None:
    op.create_table(
        name,
        sa.Column(owner, sa.String(length=64), nullable=False),
        sa.Column("skill_id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("configuration_override", JSON, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            [owner], [f"{referred}.id"], name=op.f(f"fk_{name}_{owner}_{referred}"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["skill_id"], ["skills.id"], name=op.f(f"fk_{name}_skill_id_skills"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint(owner, "skill_id", name=op.f(f"pk_{name}")),
    )
    op.create_index(op.f(f"ix_{name}_skill_id"), name, ["skill_id"], unique=False)


def upgrade() -> None:
    op.create_table(
        "skills",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("configuration", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_skills")),
        sa.UniqueConstraint("organization_id", "name", name=op.f("uq_skills_organization_id_name")),
    )
    op.create_index("ix_skills_org_created", "skills", ["organization_id", "created_at", "id"], unique=False)
    _attachments("agent_skills", "agent_id", "agents")
    _attachments("team_skills", "team_id", "teams")
    _attachments("environment_skills", "environment_id", "environments")


def downgrade() -> None:
    op.drop_table("environment_skills")
    op.drop_table("team_skills")
    op.drop_table("agent_skills")
    op.drop_index("ix_skills_org_created", table_name="skills")
    op.drop_table("skills")
