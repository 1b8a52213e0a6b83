"""The LLM models in the memory store (`value` is unique in an organization)."""

from __future__ import annotations

from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.paging import PageRequest


class MemoryModelRepository(MemoryRepository[LlmModel]):
    noun = "model"
    audited = LlmModel.audited
    unique_field = "value"

    async def list_page(
        self, organization_id: str, page: PageRequest, *, enabled_only: bool = False
    ) -> tuple[list[LlmModel], int]:
        return self.page_where(organization_id, page, lambda model: model.enabled or not enabled_only)
