"""Configuration value objects on the wire, with the spec's defaults and the domain's bounds."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.config import LLM_BOUNDS, REASONING_BOUNDS
from controlplane_domain.secrets.entity import SECRET_NAME
from controlplane_wire.base import NOT_BLANK_SCHEMA, Request


def _meta(bounds: Any, name: str) -> Meta:
    bound = bounds[name]
    return Meta(ge=bound.ge, le=bound.le, extra_json_schema=zero_edges(bound.ge, bound.le))


def zero_edges(ge: float | None = None, le: float | None = None) -> dict[str, Any] | None:
    """Litestar's OpenAPI generator drops bounds equal to 0; restate them so the document shows every bound."""
    edges = {key: 0 for key, value in (("minimum", ge), ("maximum", le)) if value == 0}
    return {"extra": edges} if edges else None


Temperature = Annotated[float, _meta(LLM_BOUNDS, "temperature")]
MaxTokens = Annotated[int, _meta(LLM_BOUNDS, "max_tokens")]
TopP = Annotated[float, _meta(LLM_BOUNDS, "top_p")]
TopK = Annotated[int, _meta(LLM_BOUNDS, "top_k")]
FrequencyPenalty = Annotated[float, _meta(LLM_BOUNDS, "frequency_penalty")]
PresencePenalty = Annotated[float, _meta(LLM_BOUNDS, "presence_penalty")]
MinSteps = Annotated[int, _meta(REASONING_BOUNDS, "min_steps")]
MaxSteps = Annotated[int, _meta(REASONING_BOUNDS, "max_steps")]

# (documented only: the use case's check names the secret)
SecretName = Annotated[str, Meta(extra_json_schema={"pattern": f"^{SECRET_NAME.pattern}$"})]


class ReasoningConfig(Request, kw_only=True):
    enabled: bool = False
    model: str | None = None
    agent_id: str | None = None
    min_steps: MinSteps | None = 1
    max_steps: MaxSteps | None = 10


class LLMConfig(Request, kw_only=True):
    model: str | None = None
    temperature: Temperature | None = None
    max_tokens: MaxTokens | None = None
    top_p: TopP | None = None
    top_k: TopK | None = None
    stop: list[str] | None = None
    frequency_penalty: FrequencyPenalty | None = None
    presence_penalty: PresencePenalty | None = None


class SessionConfig(Request, kw_only=True):
    user_id: str | None = None
    session_id: str | None = None
    auto_save: bool = True
    persist: bool = True


class MCPServerConfig(Request, kw_only=True):
    """Exactly one transport: `command` (stdio) or `url` with `transport_type` (http, sse)."""

    command: Annotated[str, Meta(extra_json_schema=NOT_BLANK_SCHEMA)] | None = None
    args: list[str] | None = None
    env: dict[str, str] | None = None
    transport_type: Literal["http", "sse"] | None = None
    url: str | None = None
    headers: dict[str, str] | None = None


class ExecutionEnvironment(Request, kw_only=True):
    working_dir: str | None = None
    env_vars: dict[str, str] = {}
    secrets: list[SecretName] = []
    integration_ids: list[str] = []
    custom_integration_ids: list[str] = []
    mcp_servers: dict[Annotated[str, Meta(extra_json_schema=NOT_BLANK_SCHEMA)], MCPServerConfig] = {}  # not blank


class TeamConfiguration(Request, kw_only=True):
    member_ids: list[str] = []
    instructions: str | list[str] = ""
    reasoning: ReasoningConfig | None = None
    llm: LLMConfig | None = None
    tools: list[dict[str, Any]] = []
    knowledge_base: dict[str, Any] | None = None
    session: SessionConfig | None = None
    dependencies: dict[str, Any] = {}
    markdown: bool = True
    add_datetime_to_instructions: bool = False
    structured_outputs: bool = False
    response_model: str | None = None
    debug_mode: bool = False
    monitoring: bool = False
    metadata: dict[str, Any] = {}


class TeamConfigurationUpdate(Request, kw_only=True):
    """A partial configuration: the fields given replace the stored ones; `member_ids` replaces the membership."""

    member_ids: list[str] | UnsetType = UNSET
    instructions: str | list[str] | UnsetType = UNSET
    reasoning: ReasoningConfig | UnsetType | None = UNSET
    llm: LLMConfig | UnsetType | None = UNSET
    tools: list[dict[str, Any]] | UnsetType = UNSET
    knowledge_base: dict[str, Any] | UnsetType | None = UNSET
    session: SessionConfig | UnsetType | None = UNSET
    dependencies: dict[str, Any] | UnsetType = UNSET
    markdown: bool | UnsetType = UNSET
    add_datetime_to_instructions: bool | UnsetType = UNSET
    structured_outputs: bool | UnsetType = UNSET
    response_model: str | UnsetType | None = UNSET
    debug_mode: bool | UnsetType = UNSET
    monitoring: bool | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET


def given_fields(struct: msgspec.Struct) -> dict[str, Any]:
    """The fields of a partial update that the client actually sent."""
    return {name: getattr(struct, name) for name in struct.__struct_fields__ if getattr(struct, name) is not UNSET}
