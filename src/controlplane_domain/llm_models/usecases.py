"""LLM model configuration use cases."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from controlplane_domain.errors import NotFound, ValidationFailed
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.names import check_name
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset, pick
from controlplane_domain.ports import Ports
from controlplane_domain.references import Dangling, Kind, Target, check_unreferenced
from controlplane_domain.retry import retry_transient
from controlplane_domain.runtimes import RUNTIME_IDS, require_supported_runtime

MAX_PRICE_PER_MILLION = 1_000_000.0
"""A price of a million tokens above this is a typing error (a million currency units)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateModel:
    value: str
    label: str | None = None
    provider: str
    description: str | None = None
    enabled: bool = True
    compatible_runtimes: list[str] = field(default_factory=lambda: list(RUNTIME_IDS))
    input_cost_per_million: float | None = None
    output_cost_per_million: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateModel:
    value: str | Unset = UNSET
    label: str | Unset = UNSET
    provider: str | Unset = UNSET
    description: str | Unset | None = UNSET
    enabled: bool | Unset = UNSET
    compatible_runtimes: list[str] | Unset = UNSET
    input_cost_per_million: float | Unset | None = UNSET
    output_cost_per_million: float | Unset | None = UNSET


def _check_model(model: LlmModel) -> None:
    check_name("value", model.value)
    check_name("label", model.label)
    check_name("provider", model.provider)
    for index, runtime in enumerate(model.compatible_runtimes):
        require_supported_runtime(f"compatible_runtimes.{index}", runtime)
    if len(set(model.compatible_runtimes)) != len(model.compatible_runtimes):
        raise ValidationFailed("compatible_runtimes", "must not repeat a runtime")
    for name in ("input_cost_per_million", "output_cost_per_million"):
        price = getattr(model, name)
        if price is not None and not (0 <= price <= MAX_PRICE_PER_MILLION):
            raise ValidationFailed(name, f"must be between 0 and {MAX_PRICE_PER_MILLION:g}")


@retry_transient
async def create_model(ports: Ports, organization_id: str, command: CreateModel) -> LlmModel:
    now = ports.clock.now()
    model = LlmModel(
        id=ports.ids.new_id(),
        organization_id=organization_id,
        value=command.value,
        label=command.label if command.label is not None else command.value,
        provider=command.provider,
        description=command.description,
        enabled=command.enabled,
        compatible_runtimes=list(command.compatible_runtimes),
        created_at=now,
        updated_at=now,
        input_cost_per_million=command.input_cost_per_million,
        output_cost_per_million=command.output_cost_per_million,
    )
    _check_model(model)
    async with ports.uow() as uow:
        await uow.models.add(model)
        await uow.commit()
    return model


async def get_model(ports: Ports, organization_id: str, model_id: str) -> LlmModel:
    async with ports.read() as uow:
        model = await uow.models.get(organization_id, model_id)
    if model is None:
        raise NotFound("model", model_id)
    return model


async def list_models(
    ports: Ports, organization_id: str, page: PageRequest, *, enabled_only: bool = False
) -> Page[LlmModel]:
    async with ports.read() as uow:
        items, total = await uow.models.list_page(organization_id, page, enabled_only=enabled_only)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


@retry_transient
async def update_model(ports: Ports, organization_id: str, model_id: str, command: UpdateModel) -> LlmModel:
    async with ports.uow() as uow:
        model = await uow.models.get(organization_id, model_id, for_update=True)
        if model is None:
            raise NotFound("model", model_id)
        updated = replace(
            model,
            value=pick(command.value, model.value),
            label=pick(command.label, model.label),
            provider=pick(command.provider, model.provider),
            description=pick(command.description, model.description),
            enabled=pick(command.enabled, model.enabled),
            compatible_runtimes=pick(command.compatible_runtimes, model.compatible_runtimes),
            input_cost_per_million=pick(command.input_cost_per_million, model.input_cost_per_million),
            output_cost_per_million=pick(command.output_cost_per_million, model.output_cost_per_million),
            updated_at=ports.clock.now(),
        )
        _check_model(updated)
        await uow.models.update(updated)
        await uow.commit()
    return updated


@retry_transient
async def delete_model(ports: Ports, organization_id: str, model_id: str, *, force: bool = False) -> Dangling:
    """Delete a model. Agents whose `model_id` names it (its id or its value): 409 IN_USE, or with `force` they keep
    the text (references.py)."""
    async with ports.uow() as uow:
        model = await uow.models.get(organization_id, model_id, for_update=True)
        if model is None:
            raise NotFound("model", model_id)
        target = Target(Kind.MODEL, model_id, model.value)
        dangling = await check_unreferenced(uow, organization_id, target, force=force)
        await uow.models.delete(organization_id, model_id)
        await uow.commit()
    return dangling
