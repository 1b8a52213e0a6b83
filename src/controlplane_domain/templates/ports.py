"""What the templates area needs from a store (built-in templates are code, never stored)."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.repository import Repository
from controlplane_domain.templates.entity import Template


class TemplateRepository(Repository[Template], Protocol):
    async def add(self, template: Template) -> None:
        """Store a new template; Conflict when its name is taken in the organization."""

    async def update(self, template: Template) -> None:
        """Replace a stored template; Conflict when its new name is taken."""
