"""LLM model configuration entries of an organization."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class LlmModel:
    """A provider model the organization's agents may use."""

    id: str
    organization_id: str
    value: str
    label: str
    provider: str
    description: str | None
    enabled: bool
    compatible_runtimes: list[str]
    created_at: datetime
    updated_at: datetime
    input_cost_per_million: float | None = None
    """The price of a million prompt (input) tokens, in the organization's currency; None: not priced."""
    output_cost_per_million: float | None = None
    """The price of a million completion (output) tokens."""
