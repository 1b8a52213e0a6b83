"""What the templates area needs from a store (built-in templates are code, never stored)."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.paging import PageRequest
from controlplane_domain.templates.entity import Template


class TemplateRepository(Protocol):
    async def add(self, template: Template) -> None:
        """Store a new template; Conflict when its name is taken in the organization."""

    async def get(self, organization_id: str, template_id: str, *, for_update: bool = False) -> Template | None: ...

    async def update(self, template: Template) -> None:
        """Replace a stored template; Conflict when its new name is taken."""

    async def delete(self, organization_id: str, template_id: str) -> None: ...

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Template], int]: ...
