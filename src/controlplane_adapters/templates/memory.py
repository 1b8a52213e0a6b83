"""Templates in the memory store (the organizations' own: built-in templates are code)."""

from __future__ import annotations

from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.templates.entity import Template


class MemoryTemplateRepository(MemoryRepository[Template]):
    noun = "template"
    audited = Template.audited
