"""Value objects of agent and team configuration, with the spec's defaults and bounds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from controlplane_domain.errors import ValidationFailed
from controlplane_domain.rules import Bound, ValueIsWithinBounds, check_rule

JSONObject = dict[str, Any]

LLM_BOUNDS: Mapping[str, Bound] = {
    "temperature": Bound(ge=0, le=2),
    "max_tokens": Bound(ge=1),
    "top_p": Bound(ge=0, le=1),
    "top_k": Bound(ge=0),
    "frequency_penalty": Bound(ge=-2, le=2),
    "presence_penalty": Bound(ge=-2, le=2),
}
REASONING_BOUNDS: Mapping[str, Bound] = {
    "min_steps": Bound(ge=1),
    "max_steps": Bound(ge=1, le=100),
}

McpTransport = Literal["http", "sse"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningConfig:
    enabled: bool = False
    model: str | None = None
    agent_id: str | None = None
    min_steps: int | None = 1
    max_steps: int | None = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMConfig:
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    top_k: int | None = None
    stop: list[str] | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionConfig:
    user_id: str | None = None
    session_id: str | None = None
    auto_save: bool = True
    persist: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPServerConfig:
    command: str | None = None
    args: list[str] | None = None
    env: dict[str, str] | None = None
    transport_type: McpTransport | None = None
    url: str | None = None
    headers: dict[str, str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionEnvironment:
    working_dir: str | None = None
    env_vars: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    integration_ids: list[str] = field(default_factory=list)
    custom_integration_ids: list[str] = field(default_factory=list)
    mcp_servers: dict[str, MCPServerConfig] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class TeamSettings:
    """TeamConfiguration less `member_ids`, which is derived from the agents' `team_id`."""

    instructions: str | list[str] = ""
    reasoning: ReasoningConfig | None = None
    llm: LLMConfig | None = None
    tools: list[JSONObject] = field(default_factory=list)
    knowledge_base: JSONObject | None = None
    session: SessionConfig | None = None
    dependencies: JSONObject = field(default_factory=dict)
    markdown: bool = True
    add_datetime_to_instructions: bool = False
    structured_outputs: bool = False
    response_model: str | None = None
    debug_mode: bool = False
    monitoring: bool = False
    metadata: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class McpServerHasOneTransport:
    """An MCP server is either stdio (`command`) or HTTP/SSE (`url`, `transport_type`), never both or neither."""

    field: str
    server: MCPServerConfig

    def is_broken(self) -> bool:
        return bool(self.issue())

    def issue(self) -> str:
        stdio = self.server.command is not None
        remote = self.server.url is not None or self.server.transport_type is not None
        if stdio and remote:
            return "specify exactly one transport: `command` (stdio) or `url`/`transport_type` (http, sse), not both"
        if not stdio and not remote:
            return "specify exactly one transport: `command` (stdio) or `url` (http, sse)"
        if stdio and not self.server.command.strip():  # type: ignore[union-attr]
            return "`command` must not be blank"
        if remote and not (self.server.url or "").strip():
            return "`url` is required for the http and sse transports"
        return ""


@dataclass(frozen=True, slots=True)
class ReasoningStepsAreOrdered:
    """`min_steps` does not exceed `max_steps`."""

    field: str
    reasoning: ReasoningConfig

    def is_broken(self) -> bool:
        low, high = self.reasoning.min_steps, self.reasoning.max_steps
        return low is not None and high is not None and low > high

    def issue(self) -> str:
        return "min_steps must not exceed max_steps"


def check_llm_config(prefix: str, llm: LLMConfig) -> None:
    """Every numeric LLM parameter lies inside its bounds."""
    for name, bound in LLM_BOUNDS.items():
        check_rule(ValueIsWithinBounds(f"{prefix}.{name}", getattr(llm, name), bound))


def check_reasoning_config(prefix: str, reasoning: ReasoningConfig) -> None:
    """Step counts lie inside their bounds and in order."""
    for name, bound in REASONING_BOUNDS.items():
        check_rule(ValueIsWithinBounds(f"{prefix}.{name}", getattr(reasoning, name), bound))
    check_rule(ReasoningStepsAreOrdered(f"{prefix}.min_steps", reasoning))


def check_execution_environment(prefix: str, environment: ExecutionEnvironment) -> None:
    """Every MCP server names exactly one transport."""
    for name, server in environment.mcp_servers.items():
        if not name.strip():
            raise ValidationFailed(f"{prefix}.mcp_servers", "server names must not be blank")
        check_rule(McpServerHasOneTransport(f"{prefix}.mcp_servers.{name}", server))


def check_team_settings(prefix: str, settings: TeamSettings) -> None:
    """All bounds of a team configuration."""
    if settings.reasoning is not None:
        check_reasoning_config(f"{prefix}.reasoning", settings.reasoning)
    if settings.llm is not None:
        check_llm_config(f"{prefix}.llm", settings.llm)
