"""The LLM models' repository port (a unit of work's `models`)."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.paging import PageRequest
from controlplane_domain.repository import Repository


class ModelRepository(Repository[LlmModel], Protocol):
    async def list_page(
        self, organization_id: str, page: PageRequest, *, enabled_only: bool = False
    ) -> tuple[list[LlmModel], int]: ...
