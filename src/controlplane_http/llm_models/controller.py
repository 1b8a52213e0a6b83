"""LLM models."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, delete, get, patch, post
from litestar.params import FromPath, JSONBody, Parameter
from litestar.types import Scope

from controlplane_domain.llm_models import usecases
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.runtimes import RUNTIME_IDS
from controlplane_http.handlers import (
    DANGLING,
    Force,
    Limit,
    Offset,
    OldestFirst,
    caller,
    deleted,
    errors,
    page_of,
    page_request,
)
from controlplane_wire.base import to_wire
from controlplane_wire.configuration import given_fields
from controlplane_wire.llm_models import Model, ModelCreate, ModelList, ModelUpdate


def model_out(model: LlmModel) -> Model:
    return to_wire(model, Model)


class ModelController(Controller):
    path = "/api/v1/models"
    tags = ["models"]

    @post("/", operation_id="createModel", status_code=201, responses=errors(400, 409, 415))
    async def create_model(self, data: JSONBody[ModelCreate], scope: Scope) -> Model:
        ports, principal = caller(scope)
        command = usecases.CreateModel(
            value=data.value,
            label=data.label,
            provider=data.provider,
            description=data.description,
            enabled=data.enabled,
            compatible_runtimes=list(RUNTIME_IDS) if data.compatible_runtimes is None else data.compatible_runtimes,
            input_cost_per_million=data.input_cost_per_million,
            output_cost_per_million=data.output_cost_per_million,
        )
        return model_out(await usecases.create_model(ports, principal.organization_id, command))

    @get("/", operation_id="listModels", responses=errors())
    async def list_models(
        self,
        scope: Scope,
        enabled_only: Annotated[bool, Parameter(description="only enabled models")] = False,
        limit: Limit = 50,
        offset: Offset = 0,
        order: OldestFirst = None,
    ) -> ModelList:
        ports, principal = caller(scope)
        page = await usecases.list_models(
            ports, principal.organization_id, page_request(limit, offset, order), enabled_only=enabled_only
        )
        return page_of(ModelList, page, model_out)

    @get("/{model_id:str}", operation_id="getModel", responses=errors(404))
    async def get_model(self, model_id: FromPath[str], scope: Scope) -> Model:
        ports, principal = caller(scope)
        return model_out(await usecases.get_model(ports, principal.organization_id, model_id))

    @patch("/{model_id:str}", operation_id="updateModel", responses=errors(400, 404, 409, 415))
    async def update_model(self, model_id: FromPath[str], data: JSONBody[ModelUpdate], scope: Scope) -> Model:
        ports, principal = caller(scope)
        command = usecases.UpdateModel(**given_fields(data))
        return model_out(await usecases.update_model(ports, principal.organization_id, model_id, command))

    @delete(
        "/{model_id:str}",
        operation_id="deleteModel",
        status_code=204,
        responses=errors(404, 409),
        response_headers=DANGLING,
    )
    async def delete_model(self, model_id: FromPath[str], scope: Scope, force: Force = False) -> Response[None]:
        ports, principal = caller(scope)
        return deleted(await usecases.delete_model(ports, principal.organization_id, model_id, force=force))
