"""Policies and their decisions in the memory store."""

from __future__ import annotations

from collections.abc import Sequence

from controlplane_adapters.memory.base import MemoryRepository, sorted_page
from controlplane_domain.paging import PageRequest
from controlplane_domain.policies.entity import Decision, DecisionFilter, Policy


class MemoryPolicyRepository(MemoryRepository[Policy]):
    noun = "policy"
    audited = Policy.audited

    async def enabled(self, organization_id: str) -> list[Policy]:
        mine = [p for p in self.rows.values() if p.organization_id == organization_id and p.enabled]
        return sorted(mine, key=lambda policy: (policy.created_at, policy.id))


class MemoryDecisionRepository:
    def __init__(self, rows: dict[str, Decision]) -> None:
        self.rows = rows

    async def add_many(self, decisions: Sequence[Decision]) -> None:
        for decision in decisions:
            self.rows[decision.id] = decision

    async def list_page(
        self, organization_id: str, page: PageRequest, where: DecisionFilter
    ) -> tuple[list[Decision], int]:
        def keep(d: Decision) -> bool:
            return (
                d.organization_id == organization_id
                and where.action in (None, d.action)
                and where.policy_id in (None, d.policy_id)
                and where.allowed in (None, d.allowed)
                and (where.since is None or d.created_at >= where.since)
                and (where.until is None or d.created_at < where.until)
            )

        return sorted_page(filter(keep, self.rows.values()), lambda d: (d.created_at, d.id), page)
