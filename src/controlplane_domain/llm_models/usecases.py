"""LLM model configuration use cases."""

from __future__ import annotations

from dataclasses import dataclass, field

from controlplane_domain import crud
from controlplane_domain.crud import Area
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.names import check_name
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.ports import Ports
from controlplane_domain.references import Dangling, Kind
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
    label = command.label if command.label is not None else command.value
    model = crud.new(LlmModel, ports, organization_id, command, label=label)
    _check_model(model)
    return await crud.add(MODELS, ports, model)


MODELS = Area("model", lambda uow: uow.models, Kind.MODEL, name=lambda model: model.value)


async def get_model(ports: Ports, organization_id: str, model_id: str) -> LlmModel:
    return await crud.get(MODELS, ports, organization_id, model_id)


async def list_models(
    ports: Ports, organization_id: str, page: PageRequest, *, enabled_only: bool = False
) -> Page[LlmModel]:
    async with ports.read() as uow:
        items, total = await uow.models.list_page(organization_id, page, enabled_only=enabled_only)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


@retry_transient
async def update_model(ports: Ports, organization_id: str, model_id: str, command: UpdateModel) -> LlmModel:
    return await crud.patch(MODELS, ports, organization_id, model_id, command, _check_model)


@retry_transient
async def delete_model(ports: Ports, organization_id: str, model_id: str, *, force: bool = False) -> Dangling:
    """Delete a model. Agents whose `model_id` names it (its id or its value): 409 IN_USE, or with `force` they keep
    the text (references.py)."""
    return await crud.delete(MODELS, ports, organization_id, model_id, force=force)
