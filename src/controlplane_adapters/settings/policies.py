"""The policy processes' settings (CONTROLPLANE_POLICY_*; no YAML keys): the sandbox of docs/policies.md."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PolicySettings:
    processes: int = 2
    """CONTROLPLANE_POLICY_PROCESSES: how many policy processes compile and evaluate Rego (per server process)."""
    evaluation_timeout_ms: int = 250
    """CONTROLPLANE_POLICY_EVALUATION_TIMEOUT_MS: one evaluation's limit (the policy process's CPU time, with
    a wall-time backstop); past it the process ends, and the action is denied."""
    compile_timeout_ms: int = 2000
    """CONTROLPLANE_POLICY_COMPILE_TIMEOUT_MS: one compile's limit (checking a module on save, or compiling an
    organization's policies for an action)."""
    memory_mb: int = 512
    """CONTROLPLANE_POLICY_MEMORY_MB: a policy process's memory limit (MiB; `RLIMIT_DATA` beyond what it holds
    once started: docs/policies.md)."""
