"""LLM model configuration entries of an organization."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from controlplane_domain.audit.audited_writes import Audited


@dataclass(frozen=True, slots=True, kw_only=True)
class LlmModel:
    """A provider model the organization's agents may use."""

    audited: ClassVar[Audited] = Audited("llm_model")
    """How its changes read in the audit log (the generic repositories record them)."""

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
