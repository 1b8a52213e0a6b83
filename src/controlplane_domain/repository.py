"""The repository protocol every organization-owned area's port extends (the generic services, crud.py, take it)."""

from __future__ import annotations

from typing import Protocol, TypeVar

from controlplane_domain.paging import PageRequest

T = TypeVar("T")


class Repository(Protocol[T]):
    """What every organization-owned area's repository offers (each area's port extends it)."""

    async def add(self, obj: T) -> None: ...

    async def get(self, organization_id: str, object_id: str, *, for_update: bool = False) -> T | None: ...

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[T], int]: ...

    async def update(self, obj: T) -> None: ...

    async def delete(self, organization_id: str, object_id: str) -> None: ...
