"""The LLM models' repository port (a unit of work's `models`)."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.paging import PageRequest


class ModelRepository(Protocol):
    async def add(self, model: LlmModel) -> None: ...

    async def get(self, organization_id: str, model_id: str, *, for_update: bool = False) -> LlmModel | None: ...

    async def update(self, model: LlmModel) -> None: ...

    async def delete(self, organization_id: str, model_id: str) -> None: ...

    async def list_page(
        self, organization_id: str, page: PageRequest, *, enabled_only: bool = False
    ) -> tuple[list[LlmModel], int]: ...
