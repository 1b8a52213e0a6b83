"""Policy use cases: create, read, change, delete (each module compiled before it is stored), and the decision
log's flush and reads."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from controlplane_domain import crud
from controlplane_domain.crud import Area
from controlplane_domain.errors import DomainError, ValidationFailed
from controlplane_domain.names import check_name
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.policies.cache import CHANGED
from controlplane_domain.policies.entity import (
    REGO_MAX_LENGTH,
    Action,
    Decision,
    DecisionFilter,
    Enforcement,
    Policy,
    PolicyCompileError,
)
from controlplane_domain.policies.gate import policy_runtime
from controlplane_domain.policies.runtime import PolicyRuntime
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient

log = logging.getLogger("controlplane.policies")


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePolicy:
    name: str
    rego: str
    actions: tuple[Action, ...]
    description: str | None = None
    enabled: bool = True
    enforcement: Enforcement = Enforcement.ENFORCE


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdatePolicy:
    name: str | Unset = UNSET
    description: str | Unset | None = UNSET
    rego: str | Unset = UNSET
    enabled: bool | Unset = UNSET
    enforcement: Enforcement | Unset = UNSET
    actions: tuple[Action, ...] | Unset = UNSET


async def _check_policy(runtime: PolicyRuntime, policy: Policy, *, compile_module: bool) -> None:
    check_name("name", policy.name)
    if not policy.actions:
        raise ValidationFailed("actions", "must name at least one action")
    if len(set(policy.actions)) != len(policy.actions):
        raise ValidationFailed("actions", "must not name an action twice")
    await _check_rego(runtime, policy.rego, compile_module=compile_module)


async def _check_rego(runtime: PolicyRuntime, rego: str, *, compile_module: bool) -> None:
    if not rego.strip():
        raise ValidationFailed("rego", "must not be blank")
    if len(rego) > REGO_MAX_LENGTH:
        raise ValidationFailed("rego", f"must be at most {REGO_MAX_LENGTH} characters")
    if compile_module:
        try:
            await runtime.engine.check(rego)
        except PolicyCompileError as exc:
            raise compile_failed(exc) from None


def compile_failed(exc: PolicyCompileError) -> ValidationFailed:
    """422 on `rego`, the compiler's message and where (also as `line` and `column` in the details)."""
    where = "" if exc.line is None else f"line {exc.line}" + ("" if exc.column is None else f", column {exc.column}")
    failed = ValidationFailed("rego", f"{where}: {exc.message}" if where else exc.message)
    failed.details.update(line=exc.line, column=exc.column)
    return failed


POLICIES = Area("policy", lambda uow: uow.policies)


async def require_policy(uow: UnitOfWork, organization_id: str, policy_id: str, *, lock: bool = False) -> Policy:
    return await crud.require(POLICIES, uow, organization_id, policy_id, lock=lock)


async def _changed(ports: Ports) -> None:
    """Every node drops its compiled policies (cache.py)."""
    if ports.bus is not None:
        await ports.bus.publish(CHANGED)


@retry_transient
async def create_policy(ports: Ports, organization_id: str, command: CreatePolicy) -> Policy:
    runtime = policy_runtime(ports)
    policy = crud.new(Policy, ports, organization_id, command)
    await _check_policy(runtime, policy, compile_module=True)
    await crud.add(POLICIES, ports, policy)
    await _changed(ports)
    return policy


async def get_policy(ports: Ports, organization_id: str, policy_id: str) -> Policy:
    return await crud.get(POLICIES, ports, organization_id, policy_id)


async def list_policies(ports: Ports, organization_id: str, page: PageRequest) -> Page[Policy]:
    return await crud.list_page(POLICIES, ports, organization_id, page)


@retry_transient
async def update_policy(ports: Ports, organization_id: str, policy_id: str, command: UpdatePolicy) -> Policy:
    """A new module is compiled before the transaction opens (a compile may take up to its limit, seconds, which
    no lock should be held for): the policy is read first, so that another organization's is still 404 whatever
    the module, and an unchanged module is not compiled again."""
    runtime = policy_runtime(ports)
    if not isinstance(command.rego, Unset):
        async with ports.read() as reader:
            stored = await require_policy(reader, organization_id, policy_id)
        if command.rego != stored.rego:
            await _check_rego(runtime, command.rego, compile_module=True)

    async def check(uow: UnitOfWork, updated: Policy, stored: Policy) -> Policy:
        await _check_policy(runtime, updated, compile_module=False)  # (compiled above when it changes)
        return updated

    updated = await crud.patch_in(POLICIES, ports, organization_id, policy_id, command, check)
    await _changed(ports)
    return updated


@retry_transient
async def delete_policy(ports: Ports, organization_id: str, policy_id: str) -> None:
    """Delete the policy; its decisions stay in the log (they name it)."""
    await crud.delete(POLICIES, ports, organization_id, policy_id)
    await _changed(ports)


async def flush_decisions(ports: Ports) -> int:
    """Write every decision (and denial) waiting in this node's log in one transaction; how many
    (`PolicyRuntime.flush`)."""
    return 0 if ports.policies is None else await ports.policies.flush(ports.uow)


async def list_decisions(
    ports: Ports, organization_id: str, page: PageRequest, where: DecisionFilter
) -> Page[Decision]:
    """`GET /api/v1/policy-decisions`: this node's waiting decisions are written first (a client reads its own)."""
    if where.since is not None and where.until is not None and where.since > where.until:
        raise ValidationFailed("from", "must not be after `to`", "query")
    try:
        await flush_decisions(ports)
    except DomainError:  # the store refused them: they wait for the next flush, the read may still answer
        log.warning("writing the waiting policy decisions failed", exc_info=True)
    async with ports.read() as uow:
        items, total = await uow.policy_decisions.list_page(organization_id, page, where)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)
