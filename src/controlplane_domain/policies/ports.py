"""What the policies area needs from the outside: its two stores, and an engine that compiles and evaluates Rego."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from controlplane_domain.paging import PageRequest
from controlplane_domain.policies.entity import Decision, DecisionFilter, Outcome, Policy
from controlplane_domain.repository import Repository


class PolicyRepository(Repository[Policy], Protocol):
    async def add(self, policy: Policy) -> None:
        """Store a new policy; Conflict when its name is taken in the organization."""

    async def update(self, policy: Policy) -> None:
        """Replace a stored policy; Conflict when its new name is taken."""

    async def enabled(self, organization_id: str) -> list[Policy]:
        """Every enabled policy of the organization, in (created_at, id) order."""


class DecisionRepository(Protocol):
    async def add_many(self, decisions: Sequence[Decision]) -> None: ...

    async def list_page(
        self, organization_id: str, page: PageRequest, where: DecisionFilter
    ) -> tuple[list[Decision], int]:
        """A page of the organization's decisions matching `where`, in (created_at, id) order, and their total."""


class PreparedPolicies(Protocol):
    """Policies to be compiled together, ready to decide one input after another."""

    async def evaluate(self, document: Mapping[str, Any]) -> list[Outcome]:
        """Each policy's outcome, in the order the policies were prepared; never raises for a policy's own fault
        nor for the engine's (a module that errors, an evaluation that runs out of time or memory, a policy process
        that crashes: each policy has an `Outcome` with its `error`, which denies)."""


class PolicyEngine(Protocol):
    async def check(self, rego: str) -> None:
        """Compile the module alone; PolicyCompileError with the compiler's message and line when it does not (or
        when it is refused before compiling: too large, too deep, a built-in outside the allowlist)."""

    def prepare(self, policies: Sequence[Policy]) -> PreparedPolicies:
        """The policies' modules, to be compiled together (each in a package of its own): cheap, the compiling
        may wait for the first evaluation."""
