"""Policy and decision repository contract on every store: scoping, the unique name, the enabled policies, the
decision log's filters and pages."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_domain.errors import Conflict, NotFound
from controlplane_domain.paging import PageRequest
from controlplane_domain.policies.entity import Action, Decision, DecisionFilter, Enforcement, Policy
from controlplane_domain.policies.runtime import PolicyRuntime
from controlplane_domain.policies.usecases import UpdatePolicy, update_policy
from controlplane_domain.ports import Ports
from tests.contract.conftest import UowFactory

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
REGO = 'package p\nimport rego.v1\n\ndeny contains "no" if input.request.prompt == "no"\n'


def policy(name: str, org: str = "org-a", *, at: int = 0, enabled: bool = True) -> Policy:
    return Policy(
        id=f"{org}-policy-{name}", organization_id=org, name=name, description="d", rego=REGO, enabled=enabled,
        enforcement=Enforcement.AUDIT, actions=(Action.EXECUTE, Action.JOB_FIRE),
        created_at=T0 + timedelta(seconds=at), updated_at=T0 + timedelta(seconds=at),
    )  # fmt: skip


def decision(number: int, *, org: str = "org-a", action: Action = Action.EXECUTE, allowed: bool = True) -> Decision:
    return Decision(
        id=f"{org}-decision-{number:03d}", organization_id=org, evaluation_id=f"evaluation-{number}", action=action,
        policy_id=f"policy-{number % 2}", policy_name="p", enforcement=Enforcement.ENFORCE, allowed=allowed,
        deny=() if allowed else ("no", "never"), error=None if allowed else "boom", subject=None if number else "s",
        roles=("member",), resource_type="agent", resource_id=None, created_at=T0 + timedelta(seconds=number),
    )  # fmt: skip


async def test_policies_round_trip_and_are_scoped(uow: UowFactory) -> None:
    stored, other = policy("first"), policy("first", "org-b")
    async with uow() as work:
        await work.policies.add(stored)
        await work.policies.add(other)
        await work.commit()
    async with uow() as work:
        assert await work.policies.get("org-a", stored.id) == stored
        assert await work.policies.get("org-b", stored.id) is None
        with pytest.raises(Conflict):
            await work.policies.add(replace(stored, id="again"))
    async with uow() as work:
        changed = replace(stored, enabled=False, actions=(Action.SECRET_WRITE,), rego=REGO + "# changed\n")
        await work.policies.update(changed)
        await work.commit()
    async with uow() as work:
        assert await work.policies.get("org-a", stored.id) == changed
        await work.policies.delete("org-a", stored.id)
        await work.commit()
    async with uow() as work:
        assert await work.policies.get("org-a", stored.id) is None
        assert await work.policies.get("org-b", other.id) == other


async def test_the_enabled_policies_of_an_organization_in_creation_order(uow: UowFactory) -> None:
    async with uow() as work:
        for item in (policy("late", at=2), policy("early", at=1), policy("off", at=0, enabled=False),
                     policy("elsewhere", "org-b")):  # fmt: skip
            await work.policies.add(item)
        await work.commit()
    async with uow() as work:
        assert [p.name for p in await work.policies.enabled("org-a")] == ["early", "late"]
        items, total = await work.policies.list_page("org-a", PageRequest(limit=2))
        assert ([p.name for p in items], total) == (["off", "early"], 3)


async def test_decisions_are_filtered_and_paged(uow: UowFactory) -> None:
    logged = [decision(n, allowed=n % 3 != 0, action=Action.EXECUTE if n < 5 else Action.JOB_FIRE) for n in range(8)]
    async with uow() as work:
        await work.policy_decisions.add_many([*logged, decision(1, org="org-b")])
        await work.policy_decisions.add_many([])
        await work.commit()

    async def page(where: DecisionFilter, limit: int = 50, offset: int = 0) -> tuple[list[str], int]:
        async with uow() as work:
            items, total = await work.policy_decisions.list_page("org-a", PageRequest(limit, offset), where)
        return [d.id for d in items], total

    assert await page(DecisionFilter()) == ([d.id for d in logged], 8)
    async with uow() as work:
        assert (await work.policy_decisions.list_page("org-a", PageRequest(), DecisionFilter()))[0] == logged
    assert await page(DecisionFilter(allowed=False)) == ([logged[n].id for n in (0, 3, 6)], 3)
    assert await page(DecisionFilter(action=Action.JOB_FIRE, allowed=True)) == ([logged[n].id for n in (5, 7)], 2)
    assert await page(DecisionFilter(policy_id="policy-1")) == ([logged[n].id for n in (1, 3, 5, 7)], 4)
    window = DecisionFilter(since=T0 + timedelta(seconds=2), until=T0 + timedelta(seconds=4))
    assert await page(window) == ([logged[2].id, logged[3].id], 2)
    assert await page(DecisionFilter(), limit=3, offset=6) == ([logged[6].id, logged[7].id], 8)


async def test_a_flush_of_many_decisions_writes_every_one_of_them(uow: UowFactory) -> None:
    """A busy quarter second's decisions go in statements of a few dozen (policies/sql.py): none lost or doubled."""
    many = [decision(n, allowed=n % 7 != 0) for n in range(133)]
    async with uow() as work:
        await work.policy_decisions.add_many(many)
        await work.commit()
    async with uow() as work:
        first, total = await work.policy_decisions.list_page("org-a", PageRequest(100, 0), DecisionFilter())
        rest, _ = await work.policy_decisions.list_page("org-a", PageRequest(100, 100), DecisionFilter())
    assert (total, [*first, *rest]) == (133, many)


class ChangingEngine:
    """An engine whose compile changes the policy's description in a unit of work of its own (as a concurrent
    request would during a compile of seconds): it could not while the PATCH held its transaction."""

    def __init__(self, uow: UowFactory, policy_id: str) -> None:
        self.uow, self.policy_id, self.checked = uow, policy_id, list[str]()

    async def check(self, rego: str) -> None:
        async with self.uow() as work:
            stored = await work.policies.get("org-a", self.policy_id, for_update=True)
            assert stored is not None
            await work.policies.update(replace(stored, description="changed during the compile"))
            await work.commit()
        self.checked.append(rego)

    def prepare(self, policies: Sequence[Policy]) -> Any:
        raise AssertionError("not evaluated here")


async def test_a_patch_compiles_its_module_before_its_transaction(uow: UowFactory) -> None:
    stored = policy("compiled")
    async with uow() as work:
        await work.policies.add(stored)
        await work.commit()
    engine = ChangingEngine(uow, stored.id)
    ports = Ports(uow=uow, clock=ManualClock(T0), ids=UuidGenerator(), policies=PolicyRuntime(engine, None))
    new_rego = REGO + "# new\n"
    updated = await asyncio.wait_for(update_policy(ports, "org-a", stored.id, UpdatePolicy(rego=new_rego)), 30)
    assert engine.checked == [new_rego]
    assert (updated.rego, updated.description) == (new_rego, "changed during the compile")
    await update_policy(ports, "org-a", stored.id, UpdatePolicy(rego=new_rego, enabled=False))  # unchanged: as is
    assert engine.checked == [new_rego]
    with pytest.raises(NotFound):
        await update_policy(ports, "org-b", stored.id, UpdatePolicy(rego=REGO + "# elsewhere\n"))
    assert engine.checked == [new_rego]
