"""LLM models."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller
from litestar.params import Parameter

from controlplane_domain.llm_models import usecases
from controlplane_domain.runtimes import RUNTIME_IDS
from controlplane_http.area import HttpArea
from controlplane_http.crud import Create, Listing, Read, Remove, Resource, Update, given_as, routes
from controlplane_http.signatures import Query
from controlplane_wire.configuration import given_fields
from controlplane_wire.llm_models import Model, ModelCreate, ModelList, ModelUpdate


def _create(data: ModelCreate) -> usecases.CreateModel:
    runtimes = list(RUNTIME_IDS) if data.compatible_runtimes is None else data.compatible_runtimes
    return usecases.CreateModel(**{**given_fields(data), "compatible_runtimes": runtimes})


EnabledOnly = Annotated[bool, Parameter(description="only enabled models")]


@routes(
    Resource("model", "Model", Model, ModelList),
    Create(usecases.create_model, body=ModelCreate, command=_create, codes=(400, 409, 415)),
    Listing(usecases.list_models, before=(Query("enabled_only", EnabledOnly, False),)),
    Read(usecases.get_model),
    Update(usecases.update_model, body=ModelUpdate, command=given_as(usecases.UpdateModel), codes=(400, 404, 409, 415)),
    Remove(usecases.delete_model),
)
class ModelController(Controller):
    path = "/api/v1/models"
    tags = ["models"]


AREA = HttpArea((ModelController,), visible={"model_id": usecases.get_model})
