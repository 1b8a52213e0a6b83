"""The one registry of supported runtimes, used by agent, team and model validation."""

from __future__ import annotations

from dataclasses import dataclass

from controlplane_domain.errors import ValidationFailed


@dataclass(frozen=True, slots=True)
class Runtime:
    """A runtime a worker can run an agent or a team leader on, and what it supports."""

    id: str
    name: str
    description: str
    supports_streaming: bool
    supports_tools: bool
    supports_mcp: bool
    supports_teams: bool
    supports_system_prompt: bool


RUNTIMES: tuple[Runtime, ...] = (
    Runtime(
        id="default",
        name="Default",
        description="Chat-completions loop against an OpenAI-compatible endpoint, run by the reference worker.",
        supports_streaming=True,
        supports_tools=True,
        supports_mcp=True,
        supports_teams=True,
        supports_system_prompt=True,
    ),
    Runtime(
        id="sdk_code",
        name="Code agent SDK",
        description="A code-agent SDK runtime (tool use, file edits, shell) hosted by a worker that provides it.",
        supports_streaming=True,
        supports_tools=True,
        supports_mcp=True,
        supports_teams=True,
        supports_system_prompt=True,
    ),
)

RUNTIME_IDS: tuple[str, ...] = tuple(runtime.id for runtime in RUNTIMES)
DEFAULT_RUNTIME = "default"


def require_supported_runtime(field: str, runtime_id: str) -> str:
    """Return the runtime id, or raise ValidationFailed naming the supported ones."""
    if runtime_id not in RUNTIME_IDS:
        raise ValidationFailed(field, f"unsupported runtime '{runtime_id}'; supported: {', '.join(RUNTIME_IDS)}")
    return runtime_id
