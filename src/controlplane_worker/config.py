"""The reference worker's settings (the `controlplane worker` flags)."""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field

MAX_WAIT_SECONDS = 60.0  # the longest long poll the control plane accepts


@dataclass
class WorkerConfig:
    api_url: str
    api_key: str
    queue_id: str
    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}")
    environment: str = "default"
    llm_base_url: str = "https://api.openai.com/v1"
    llm_api_key: str | None = None
    default_model: str = "gpt-4o-mini"
    wait_seconds: float = 20.0
    llm_timeout_seconds: float = 120.0
    # Header name -> variable name: each model call sends the header with that variable's value in the run's
    # environment (its execution environment's variables and secrets), when the run has it (`--llm-header`).
    llm_env_headers: dict[str, str] = field(default_factory=dict)


def parse_env_header(text: str) -> tuple[str, str]:
    """`--llm-header NAME=VARIABLE`: the header's name and the variable it takes its value from."""
    name, _, variable = text.partition("=")
    if not name.strip() or not variable.strip():
        raise ValueError(f"--llm-header takes NAME=VARIABLE (a header and an environment variable), got {text!r}")
    return name.strip(), variable.strip()


def check_worker_config(config: WorkerConfig) -> None:
    """ValueError naming the flag when a setting is out of its range."""
    if not 0 <= config.wait_seconds <= MAX_WAIT_SECONDS:
        raise ValueError(f"--wait-seconds must be between 0 and {MAX_WAIT_SECONDS:g}, got {config.wait_seconds:g}")
    if config.llm_timeout_seconds <= 0:
        raise ValueError(f"--llm-timeout-seconds must be above 0, got {config.llm_timeout_seconds:g}")
