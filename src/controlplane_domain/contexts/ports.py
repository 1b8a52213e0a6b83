"""What the contexts area needs from a store."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.contexts.entity import Layer, OwnedContext, OwnerType, ResolvedContext


class ContextRepository(Protocol):
    async def get(self, organization_id: str, owner_type: OwnerType, owner_id: str) -> OwnedContext | None: ...

    async def put(self, owned: OwnedContext) -> None:
        """Store the owner's context as given, replacing the one it had."""

    async def delete(self, organization_id: str, owner_type: OwnerType, owner_id: str) -> None:
        """Remove the owner's context; nothing when it has none."""

    async def applicable(
        self, organization_id: str, *, agent_id: str | None, team_id: str | None, queue_id: str
    ) -> list[Layer]:
        """In one read, every context that applies to a new execution of the agent (`agent_id`; its team is the
        agent's) or of the team (`team_id`) on the worker queue: the agent's, the team's, the queue's environment's
        and those of the projects that hold the agent or the team (with when it joined each), in no set order
        (`resolution.ordered` orders them). Owners that do not exist contribute nothing."""

    async def any_in(self, organization_id: str) -> bool:
        """Whether the organization has a context at all (on any owner)."""

    async def for_execution(self, organization_id: str, execution_id: str) -> ResolvedContext | None:
        """The context stored with the execution when it was created; None when it had none (or there is no
        such execution)."""
